package kernfs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

func write(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return p
}

func TestReadTrimmed(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ in, want string }{
		{"0-3\n", "0-3"},
		{"  10 20\t\n\n", "10 20"},
		{"", ""},
		{"\n", ""},
		{strings.Repeat("f", 10000) + "\n", strings.Repeat("f", 10000)}, // beyond one page
	} {
		p := write(t, dir, "attr", tc.in, 0o644)
		got, err := kernfs.ReadTrimmed(p)
		if err != nil || got != tc.want {
			t.Errorf("ReadTrimmed(%.20q) = %.20q, %v; want %.20q", tc.in, got, err, tc.want)
		}
		s, ok, err := kernfs.ReadOptional(p)
		if err != nil || !ok || s != tc.want {
			t.Errorf("ReadOptional(%.20q) = %.20q, %v, %v; want %.20q, true", tc.in, s, ok, err, tc.want)
		}
	}
}

func TestReadMissing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "numa_node")
	_, err := kernfs.ReadTrimmed(p)
	if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, kernfs.ErrMalformed) {
		t.Errorf("err = %v, want fs.ErrNotExist and not ErrMalformed", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != p || !strings.Contains(err.Error(), p) {
		t.Errorf("err = %#v, want an *fs.PathError naming %s", err, p)
	}
	if s, ok, err := kernfs.ReadOptional(p); s != "" || ok || err != nil {
		t.Errorf("ReadOptional of a missing file = %q, %v, %v; want \"\", false, nil", s, ok, err)
	}
}

func TestReadOptionalOtherErrors(t *testing.T) {
	dir := t.TempDir() // reading a directory fails with EISDIR, not ENOENT
	s, ok, err := kernfs.ReadOptional(dir)
	if err == nil || ok || s != "" || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadOptional(dir) = %q, %v, %v; want an error", s, ok, err)
	}
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q does not name %s", err, dir)
	}
}

func TestReaderReuseAndMode(t *testing.T) {
	dir := t.TempDir()
	ro := write(t, dir, "smp_affinity", "0-7\n", 0o444)
	rw := write(t, dir, "smp_affinity_list", strings.Repeat("1,", 3000)+"2\n", 0o644)
	var r kernfs.Reader
	b, mode, err := r.ReadWithMode(ro)
	if err != nil || string(b) != "0-7" || mode != 0o444 {
		t.Errorf("ReadWithMode(0444 file) = %q, %o, %v", b, mode, err)
	}
	b, mode, err = r.ReadWithMode(rw)
	if err != nil || len(b) != 6001 || mode != 0o644 {
		t.Errorf("ReadWithMode(0644 file) = %d bytes, %o, %v", len(b), mode, err)
	}
	if b, err = r.Read(ro); err != nil || string(b) != "0-7" {
		t.Errorf("Read after a larger file = %q, %v", b, err)
	}
	if _, _, err := r.ReadWithMode(filepath.Join(dir, "gone")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadWithMode(missing) err = %v, want fs.ErrNotExist", err)
	}
}

func TestMalformed(t *testing.T) {
	cause := errors.New("cause")
	err := kernfs.Malformed("/sys/devices/system/node/node0/distance", "%q: %w", "10 x", cause)
	want := `read /sys/devices/system/node/node0/distance: malformed: "10 x": cause`
	if err.Error() != want {
		t.Errorf("Malformed = %q, want %q", err, want)
	}
	if !errors.Is(err, kernfs.ErrMalformed) || !errors.Is(err, cause) {
		t.Errorf("Malformed error %v does not wrap both ErrMalformed and its cause", err)
	}
}
