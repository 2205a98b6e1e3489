package apply_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/cpumask"
)

// procIRQ makes <root>/irq/N/smp_affinity_list holding content and
// returns its path. An empty content is what procfs files look like to
// stat: size 0.
func procIRQ(t *testing.T, root string, n int, content string) string {
	t.Helper()
	dir := filepath.Join(root, "irq", itoa(n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "smp_affinity_list")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestProcWriterWritesWholeList(t *testing.T) {
	long := cpumask.New()
	for c := 0; c < 1024; c += 2 {
		long = long.Or(cpumask.New(c))
	}
	for _, tc := range []struct {
		name string
		mask cpumask.Mask
	}{
		{"one CPU", cpumask.New(3)},
		{"ranges", cpumask.New(0, 1, 2, 3, 8, 9, 10, 11)},
		{"1024-bit sparse mask", long},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			path := procIRQ(t, root, 45, "")
			if err := (apply.ProcWriter{Proc: root}).WriteAffinity(45, tc.mask); err != nil {
				t.Fatal(err)
			}
			if got, want := readFile(t, path), tc.mask.String()+"\n"; got != want {
				t.Errorf("file holds %q, want %q", got, want)
			}
		})
	}
}

// TestProcWriterDoesNotTruncate checks the open flags: procfs replaces
// the mask on every write, so the writer must not ask for O_TRUNC; on a
// regular file the old tail therefore stays.
func TestProcWriterDoesNotTruncate(t *testing.T) {
	root := t.TempDir()
	path := procIRQ(t, root, 7, "0-15\n")
	if err := (apply.ProcWriter{Proc: root}).WriteAffinity(7, cpumask.New(3)); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, path), "3\n15\n"; got != want {
		t.Errorf("file holds %q, want %q (one write at offset 0, no truncation)", got, want)
	}
}

func TestProcWriterMissingIRQ(t *testing.T) {
	root := t.TempDir()
	procIRQ(t, root, 1, "")
	for _, n := range []int{2, 1000} { // no directory; directory without the file
		if n == 1000 {
			if err := os.MkdirAll(filepath.Join(root, "irq", "1000"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		err := (apply.ProcWriter{Proc: root}).WriteAffinity(n, cpumask.New(0))
		if !errors.Is(err, syscall.ENOENT) {
			t.Fatalf("IRQ %d: err = %v, want ENOENT", n, err)
		}
		path := filepath.Join(root, "irq", itoa(n), "smp_affinity_list")
		if !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name %s", err, path)
		}
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("IRQ %d: the write created %s (O_CREAT?): %v", n, path, err)
		}
	}
}

// TestProcWriterErrorNamesFileAndValue makes the write itself fail by
// pointing smp_affinity_list at /dev/full, which answers ENOSPC like a
// full vector matrix.
func TestProcWriterErrorNamesFileAndValue(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full:", err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "irq", "45")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "smp_affinity_list")
	if err := os.Symlink("/dev/full", path); err != nil {
		t.Fatal(err)
	}
	err := (apply.ProcWriter{Proc: root}).WriteAffinity(45, cpumask.New(3))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v, want ENOSPC", err)
	}
	want := `write ` + path + ` "3": ` + syscall.ENOSPC.Error()
	if err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
}

func TestProcWriterRefusesEmptyMask(t *testing.T) {
	root := t.TempDir()
	path := procIRQ(t, root, 5, "")
	err := (apply.ProcWriter{Proc: root}).WriteAffinity(5, cpumask.Mask{})
	if !errors.Is(err, apply.ErrEmptyMask) {
		t.Fatalf("err = %v, want ErrEmptyMask", err)
	}
	if got := readFile(t, path); got != "" {
		t.Errorf("file holds %q after a refused write", got)
	}
}
