package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// root is the repository this module builds.
const root = "../.."

// TestReproducible builds the image twice, in separate directories, and
// wants the same digest and the same archive bytes; the one layer holds
// only the static binary, root's, at the epoch.
func TestReproducible(t *testing.T) {
	var archives [2][]byte
	var images [2]*Image
	for i := range images {
		im, err := Build(root, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := im.WriteArchive(&buf); err != nil {
			t.Fatal(err)
		}
		images[i], archives[i] = im, buf.Bytes()
	}
	t.Logf("%s@%s", images[0].Ref, images[0].Digest)
	if images[0].Digest != images[1].Digest {
		t.Fatalf("two builds, two digests: %s and %s", images[0].Digest, images[1].Digest)
	}
	if !bytes.Equal(archives[0], archives[1]) {
		t.Error("two builds with one digest wrote different archives")
	}
	version, err := Version(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := Repository + ":" + version; images[0].Ref != want {
		t.Errorf("reference %q, want %q", images[0].Ref, want)
	}
	epoch, err := Epoch(root)
	if err != nil {
		t.Fatal(err)
	}

	layers, err := images[0].img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var names []string
	var bin []byte
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.Mode != 0o755 || !h.ModTime.Equal(epoch) {
			t.Errorf("%s: uid %d gid %d mode %o mtime %v, want 0 0 755 %v", h.Name, h.Uid, h.Gid, h.Mode, h.ModTime, epoch)
		}
		if h.Name == binPath {
			if bin, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := strings.Join(names, " "); got != "usr/ usr/local/ usr/local/bin/ "+binPath {
		t.Errorf("layer holds %s, want the binary and its directories", got)
	}
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("%s: %v", binPath, err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has an ELF interpreter: the image has no libc", binPath)
		}
	}
	binFile := filepath.Join(t.TempDir(), "numairqd")
	if err := os.WriteFile(binFile, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if v, err := exec.Command(binFile, "--version").Output(); err != nil || !strings.HasPrefix(string(v), "numairqd "+version+" ") {
		t.Errorf("numairqd --version: %q, %v; want version %s", v, err, version)
	}

	cf, err := images[0].img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !cf.Created.Equal(epoch) || cf.Config.User != "0:0" || strings.Join(cf.Config.Entrypoint, " ") != "/"+binPath {
		t.Errorf("config: created %v user %q entrypoint %q; want %v, 0:0, /%s", cf.Created, cf.Config.User, cf.Config.Entrypoint, epoch, binPath)
	}
}

// TestEpoch: SOURCE_DATE_EPOCH wins over the commit time; a bad one is
// an error naming it.
func TestEpoch(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	if e, err := Epoch(root); err != nil || !e.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("Epoch = %v, %v; want 1700000000", e, err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if _, err := Epoch(root); err == nil || !strings.Contains(err.Error(), "yesterday") {
		t.Errorf("SOURCE_DATE_EPOCH=yesterday: %v", err)
	}
}
