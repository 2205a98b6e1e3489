package kernfs_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

func TestQuote(t *testing.T) {
	long := strings.Repeat("x", 5<<20)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", `""`},
		{"short", "0-3,x", `"0-3,x"`},
		{"escapes", "a\nb\x00", `"a\nb\x00"`},
		{"at the limit", strings.Repeat("a", kernfs.QuoteLimit), `"` + strings.Repeat("a", kernfs.QuoteLimit) + `"`},
		{"one past", strings.Repeat("a", kernfs.QuoteLimit+1), `"` + strings.Repeat("a", kernfs.QuoteLimit) + `"... (101 bytes)`},
		{"5 MB", long, `"` + strings.Repeat("x", kernfs.QuoteLimit) + `"... (5242880 bytes)`},
		// Escapes count against the limit: 25 \xff of 4 bytes each.
		{"binary", strings.Repeat("\xff", 1000), `"` + strings.Repeat(`\xff`, 25) + `"... (1000 bytes)`},
		// A rune is never split.
		{"utf-8", "é" + strings.Repeat("é", 60), `"` + strings.Repeat("é", 50) + `"... (122 bytes)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := kernfs.Quote(tc.in); got != tc.want {
				t.Errorf("Quote = %.200s, want %.200s", got, tc.want)
			}
			if got := kernfs.Quote([]byte(tc.in)); got != tc.want {
				t.Errorf("Quote([]byte) = %.200s, want %.200s", got, tc.want)
			}
		})
	}
}

func TestReadLimit(t *testing.T) {
	dir := t.TempDir()
	exact := write(t, dir, "exact", strings.Repeat("1", kernfs.MaxAttrSize), 0o644)
	if b, err := kernfs.ReadTrimmed(exact); err != nil || len(b) != kernfs.MaxAttrSize {
		t.Errorf("ReadTrimmed(MaxAttrSize bytes) = %d bytes, %v; want all of it", len(b), err)
	}
	for _, size := range []int{kernfs.MaxAttrSize + 1, 5 << 20} {
		p := write(t, dir, "cpulist", strings.Repeat("1", size), 0o644)
		var r kernfs.Reader
		_, err1 := r.Read(p)
		_, err2 := kernfs.ReadTrimmed(p)
		for _, err := range []error{err1, err2} {
			want := "read " + p + ": malformed: longer than the limit of 65536 bytes"
			if err == nil || err.Error() != want {
				t.Errorf("read of %d bytes: err = %.300v, want %q", size, err, want)
			}
			if !errors.Is(err, kernfs.ErrMalformed) {
				t.Errorf("read of %d bytes: err %v does not wrap ErrMalformed", size, err)
			}
		}
		// The buffer did not grow past the limit, and still works.
		if b, err := r.Read(exact); err != nil || len(b) != kernfs.MaxAttrSize {
			t.Errorf("Read after a long file = %d bytes, %v", len(b), err)
		}
	}
}

func TestNotRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "smp_affinity_list")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	dev := filepath.Join(dir, "cpulist")
	if err := os.Symlink("/dev/zero", dev); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, kind string }{
		{fifo, "a named pipe"},
		{dev, "a character device"},
	} {
		want := "read " + tc.path + ": malformed: not a regular file (" + tc.kind + ")"
		done := make(chan struct{})
		go func() {
			defer close(done)
			var r kernfs.Reader
			_, err1 := r.Read(tc.path)
			_, _, err2 := r.ReadWithMode(tc.path)
			_, err3 := kernfs.ReadTrimmed(tc.path)
			_, _, err4 := kernfs.ReadOptional(tc.path)
			f, err5 := kernfs.Open(tc.path)
			if err5 == nil {
				f.Close()
			}
			for i, err := range []error{err1, err2, err3, err4, err5} {
				if err == nil || err.Error() != want || !errors.Is(err, kernfs.ErrMalformed) {
					t.Errorf("reader %d: err = %v, want %q wrapping ErrMalformed", i+1, err, want)
				}
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("reading %s blocked", tc.path)
		}
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "interrupts", "CPU0\n", 0o444)
	f, err := kernfs.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b, err := io.ReadAll(f); err != nil || string(b) != "CPU0\n" {
		t.Errorf("ReadAll = %q, %v", b, err)
	}
	if _, err := kernfs.Open(filepath.Join(dir, "gone")); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), dir) {
		t.Errorf("Open(missing) err = %v, want fs.ErrNotExist naming the file", err)
	}
	if _, err := kernfs.Open(dir); !errors.Is(err, syscall.EISDIR) {
		t.Errorf("Open(dir) err = %v, want EISDIR", err)
	}
}

func TestReadAt(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "24"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "24"), "smp_affinity_list", "0-3\n", 0o644)
	dirfd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(dirfd)
	var r kernfs.Reader
	if b, err := r.ReadAt(dirfd, dir, []byte("24/smp_affinity_list")); err != nil || string(b) != "0-3" {
		t.Errorf("ReadAt = %q, %v, want \"0-3\"", b, err)
	}
	_, err = r.ReadAt(dirfd, dir, []byte("25/smp_affinity_list"))
	if want := filepath.Join(dir, "25/smp_affinity_list"); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), want) {
		t.Errorf("ReadAt(missing) err = %v, want fs.ErrNotExist naming %s", err, want)
	}
}

// TestReadNULInPath: a path with a NUL byte is refused, never cut short
// at the NUL and opened as another file.
func TestReadNULInPath(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "a", "1\n", 0o644)
	var r kernfs.Reader
	if _, err := r.Read(p + "\x00/b"); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Read of a path with a NUL = %v, want EINVAL", err)
	}
}

// TestLinks: a directory's link count follows its subdirectories, as
// procfs keeps it for /proc/irq; a bad descriptor is an error naming
// the directory.
func TestLinks(t *testing.T) {
	dir := t.TempDir()
	links := func() uint64 {
		t.Helper()
		fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(fd)
		n, err := kernfs.Links(fd, dir)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	base := links()
	for _, d := range []string{"24", "25"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, dir, "default_smp_affinity", "ff\n", 0o644)
	if got := links(); got != base+2 {
		t.Errorf("links with two subdirectories and a file = %d, want %d", got, base+2)
	}
	if err := os.Remove(filepath.Join(dir, "24")); err != nil {
		t.Fatal(err)
	}
	if got := links(); got != base+1 {
		t.Errorf("links after removing one = %d, want %d", got, base+1)
	}
	if _, err := kernfs.Links(-1, dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("Links(-1) = %v, want an error naming %s", err, dir)
	}
}
