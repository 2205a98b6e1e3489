package kernfs_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// TestReadDir lists a directory longer than one getdents64 buffer, and
// reports a missing directory, a file and a visit error as such.
func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 3000 {
		name := fmt.Sprintf("entry-with-a-long-name-%04d", i)
		write(t, dir, name, "", 0o644)
		want = append(want, name)
	}
	var r kernfs.Reader
	var got []string
	if err := r.ReadDir(dir, func(name []byte) error { got = append(got, string(name)); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("ReadDir listed %d names (first %q), want %d without . and ..", len(got), got[:min(len(got), 2)], len(want))
	}
	stop := errors.New("stop")
	n := 0
	if err := r.ReadDir(dir, func([]byte) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("ReadDir with a failing visit = %v after %d names, want the visit's error after 1", err, n)
	}
	var pe *fs.PathError
	if err := r.ReadDir(filepath.Join(dir, "missing"), func([]byte) error { return nil }); !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
		t.Errorf("ReadDir of a missing directory = %v, want a PathError of fs.ErrNotExist", err)
	}
	if err := r.ReadDir(filepath.Join(dir, want[0]), func([]byte) error { return nil }); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("ReadDir of a file = %v, want ENOTDIR", err)
	}
	// The same Reader still reads files after listing.
	p := write(t, dir, "attr", "42\n", 0o444)
	if b, err := r.Read(p); err != nil || string(b) != "42" {
		t.Errorf("Read after ReadDir = %q, %v", b, err)
	}
}

func TestReadlinkAndExists(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "driver")
	if err := os.Symlink("../../bus/pci/drivers/virtio-pci", link); err != nil {
		t.Fatal(err)
	}
	var r kernfs.Reader
	if got, err := r.Readlink(link); err != nil || got != "../../bus/pci/drivers/virtio-pci" {
		t.Errorf("Readlink = %q, %v", got, err)
	}
	if _, err := r.Readlink(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Readlink of a missing link = %v, want fs.ErrNotExist", err)
	}
	if _, err := r.Readlink(dir); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Readlink of a directory = %v, want EINVAL", err)
	}
	if !r.Exists(dir) || r.Exists(filepath.Join(dir, "missing")) || r.Exists(filepath.Join(link, "x")) {
		t.Errorf("Exists: dir %v, missing %v, below a dangling link %v; want true, false, false",
			r.Exists(dir), r.Exists(filepath.Join(dir, "missing")), r.Exists(filepath.Join(link, "x")))
	}
}

// TestWriteOnce writes a whole value in one write, never creates a
// file, and does not wait for a reader of a FIFO put in the file's
// place.
func TestWriteOnce(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "smp_affinity_list", "0-7\n", 0o644)
	if n, err := kernfs.WriteOnce(p, []byte("4\n")); err != nil || n != 2 {
		t.Fatalf("WriteOnce = %d, %v", n, err)
	}
	if b, _ := os.ReadFile(p); string(b) != "4\n7\n" { // no O_TRUNC: procfs replaces, a file keeps the tail
		t.Errorf("file = %q after WriteOnce of 4 over 0-7", b)
	}
	var pe *fs.PathError
	missing := filepath.Join(dir, "gone")
	if _, err := kernfs.WriteOnce(missing, []byte("1\n")); !errors.As(err, &pe) || pe.Op != "open" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WriteOnce of a missing file = %v, want an open PathError of fs.ErrNotExist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WriteOnce created %s", missing)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := kernfs.WriteOnce(fifo, []byte("1\n")); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, syscall.ENXIO) {
			t.Errorf("WriteOnce of a FIFO without a reader = %v, want ENXIO", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WriteOnce blocked on a FIFO")
	}
}
