package hostcorpus

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/capture"
)

// Pack writes tree as the capture at dst, with the config file at
// config ("" for none): what `numairqd capture` writes on a machine
// whose /sys and /proc are the tree's.
func Pack(tb testing.TB, tree *fakesys.Tree, config, dst string) capture.Manifest {
	tb.Helper()
	tree.Mkdir("etc")
	var buf bytes.Buffer
	m, err := capture.Write(&buf, capture.Source{Sys: tree.Sys(), Proc: tree.Proc(), Etc: tree.Path("etc"), Config: config, Version: "hostcorpus"})
	if err != nil {
		tb.Fatalf("%s: %v", dst, err)
	}
	if m.ReadErr != "" {
		tb.Fatalf("%s: numairqd could not read the tree: %s", dst, m.ReadErr)
	}
	if old, err := os.ReadFile(dst); err == nil && sameEntries(old, buf.Bytes()) {
		return m // unchanged but for the manifest's time: keep the file
	}
	if err := os.WriteFile(dst, buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return m
}

// sameEntries reports whether captures a and b hold the same entries
// besides the manifest.
func sameEntries(a, b []byte) bool {
	ea, eb := entries(a), entries(b)
	return ea != nil && maps.Equal(ea, eb)
}

// entries maps each entry of capture c but the manifest to its type,
// link target and content; nil when c is no readable capture.
func entries(c []byte) map[string]string {
	zr, err := gzip.NewReader(bytes.NewReader(c))
	if err != nil {
		return nil
	}
	out := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			return nil
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return nil
		}
		if h.Name != "manifest.json" {
			out[h.Name] = string(h.Typeflag) + h.Linkname + "\x00" + string(body)
		}
	}
}

// FleetMachine is the capture name of fleet shape sh.
func FleetMachine(sh fakesys.Shape) string { return "fleet-" + sh.Name }

// FleetSkipped is the fleet shape left out of the corpus: the 8,192-IRQ
// scale host, whose capture would be megabytes.
const FleetSkipped = "scale-256"

// WriteFleet writes the capture of every fleet shape but FleetSkipped
// into dir, each with a config file of its banned CPUs.
func WriteFleet(tb testing.TB, dir string) {
	tb.Helper()
	for _, sh := range fakesys.Shapes() {
		if sh.Name == FleetSkipped {
			continue
		}
		tree := fakesys.New(tb)
		sh.Build(tree)
		config := ""
		if sh.Banned != "" {
			config = filepath.Join(tb.TempDir(), "numairqd.yaml")
			if err := os.WriteFile(config, []byte("banned_cpus: \""+sh.Banned+"\"\n"), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
		Pack(tb, tree, config, filepath.Join(dir, FleetMachine(sh)+".tar.gz"))
	}
}

// WriteHwloc writes the capture of every HwlocMachines gather of the
// hwloc checkout at hwlocDir into dir, and returns what each derived
// or synthesized, by capture name.
func WriteHwloc(tb testing.TB, hwlocDir, dir string) map[string]Notes {
	tb.Helper()
	notes := map[string]Notes{}
	for _, m := range HwlocMachines {
		g, err := ReadGather(filepath.Join(hwlocDir, "tests", "hwloc", "linux", m.Gather+".tar.bz2"))
		if err != nil {
			tb.Fatal(err)
		}
		tree := fakesys.New(tb)
		notes[m.Name()] = FromGather(tb, tree, g, m)
		Pack(tb, tree, "", filepath.Join(dir, m.Name()+".tar.gz"))
	}
	return notes
}
