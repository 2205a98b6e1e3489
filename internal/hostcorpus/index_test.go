package hostcorpus

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
)

// hostsDir is testdata/hosts, from this package's directory.
const hostsDir = "../../testdata/hosts"

// machineName is what a capture's file stem may be.
var machineName = regexp.MustCompile(`^[a-z0-9][a-z0-9.+-]*$`)

// TestIndex checks that every row of the index names a capture that
// exists, with a shape, a source and what it holds, and that every
// capture and golden plan in testdata/hosts has its row.
func TestIndex(t *testing.T) {
	rows, err := ReadIndex(filepath.Join(hostsDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, r := range rows {
		switch {
		case !machineName.MatchString(r.Machine):
			t.Errorf("index row %q: the machine is not a file stem like %s", r.Machine, machineName)
		case listed[r.Machine]:
			t.Errorf("index row %q: listed twice", r.Machine)
		case r.Shape == "" || r.Source == "" || r.Holds == "":
			t.Errorf("index row %q: shape %q, source %q, what it holds %q: none may be empty", r.Machine, r.Shape, r.Source, r.Holds)
		}
		listed[r.Machine] = true
		if _, err := os.Stat(filepath.Join(hostsDir, r.Machine+".tar.gz")); err != nil {
			t.Errorf("index row %q: %v", r.Machine, err)
		}
	}
	for _, ext := range []string{".tar.gz", ".plan"} {
		files, err := filepath.Glob(filepath.Join(hostsDir, "*"+ext))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if m := strings.TrimSuffix(filepath.Base(f), ext); !listed[m] {
				t.Errorf("%s: no row for %q in the index", f, m)
			}
		}
	}
}

// TestIndexCitesGenerators checks that every generated capture has its
// row, and that a hwloc row cites the gather and commit it came from.
func TestIndexCitesGenerators(t *testing.T) {
	rows, err := ReadIndex(filepath.Join(hostsDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Row{}
	for _, r := range rows {
		byName[r.Machine] = r
	}
	for _, sh := range fakesys.Shapes() {
		if _, ok := byName[FleetMachine(sh)]; !ok && sh.Name != FleetSkipped {
			t.Errorf("fleet shape %s has no row %s", sh.Name, FleetMachine(sh))
		}
	}
	for _, m := range HwlocMachines {
		r, ok := byName[m.Name()]
		want := "tests/hwloc/linux/" + m.Gather + ".tar.bz2` @ " + HwlocCommit[:12]
		switch {
		case !ok:
			t.Errorf("gather %s has no row %s", m.Gather, m.Name())
		case !strings.Contains(r.Source, want):
			t.Errorf("row %s: source %q does not cite %q", m.Name(), r.Source, want)
		case m.NIC != strings.Contains(r.Holds, "synthetic NIC"):
			t.Errorf("row %s: says synthetic NIC %v, the generator adds one %v", m.Name(), !m.NIC, m.NIC)
		}
	}
}

// TestReadIndex reads index tables among other text and tables.
func TestReadIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	text := "# Corpus\n\n| other | table |\n|---|---|\n| x | y |\n\n" +
		"| machine | shape | source | what it holds |\n|---|---|---|---|\n" +
		"| `fleet-a` | 2 sockets | fakesys a | synthesized |\n| b | 1 node | url | real |\n\ntext\n\n" +
		"| Machine | Shape | Source | What it holds |\n| :-- | --- | --- | --- |\n| c | s | src | h |\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{{"fleet-a", "2 sockets", "fakesys a", "synthesized"}, {"b", "1 node", "url", "real"}, {"c", "s", "src", "h"}}
	if !slices.Equal(rows, want) {
		t.Errorf("rows %q, want %q", rows, want)
	}
	if err := os.WriteFile(path, []byte("| machine | shape | source | what it holds |\n|---|---|---|---|\n| a | b |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadIndex(path); err == nil || !strings.Contains(err.Error(), "README.md:3: 2 cells, want 4") {
		t.Errorf("a short row: error %v, want the file, line and cell counts", err)
	}
}
