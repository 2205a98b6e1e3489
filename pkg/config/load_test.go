package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadFileTypes checks Load reads only regular files of at most
// maxSize bytes, and names the path in every error. Load runs in a
// goroutine with a timeout so that a regression (reading /dev/zero to
// the end, blocking on a FIFO) fails the test instead of hanging it.
func TestLoadFileTypes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	symlink := func(target, name string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	good := write("good.yaml", "banned_cpus: 0\n")
	// A valid file of exactly maxSize bytes: a setting padded with a comment.
	head := "banned_cpus: 1\n#"
	atLimit := write("at-limit.yaml", head+strings.Repeat("x", maxSize-len(head)-1)+"\n")
	overLimit := write("over-limit.yaml", "#"+strings.Repeat("x", maxSize-1)+"\n")

	tests := []struct {
		name    string
		path    string
		wantErr string // substring after the path; "" for success
	}{
		{"regular file", good, ""},
		{"symlink to a regular file", symlink(good, "link.yaml"), ""},
		{"exactly maxSize", atLimit, ""},
		{"maxSize+1", overLimit, ": larger than the limit of 1048576 bytes"},
		{"dev zero", "/dev/zero", ": is a character device, not a regular file"},
		{"dev null", "/dev/null", ": is a character device, not a regular file"},
		{"fifo", fifo, ": is a named pipe (FIFO), not a regular file"},
		{"symlink to a fifo", symlink(fifo, "fifo-link.yaml"), ": is a named pipe (FIFO), not a regular file"},
		{"directory", dir, ": is a directory, not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, load := range []struct {
				name string
				f    func(string) (*Config, error)
			}{{"Load", Load}, {"LoadOrDefault", LoadOrDefault}} {
				type result struct {
					c   *Config
					err error
				}
				done := make(chan result, 1)
				go func() {
					c, err := load.f(tt.path)
					done <- result{c, err}
				}()
				var r result
				select {
				case r = <-done:
				case <-time.After(10 * time.Second):
					t.Fatalf("%s(%s) did not return within 10s", load.name, tt.path)
				}
				if tt.wantErr == "" {
					if r.err != nil {
						t.Errorf("%s: %v", load.name, r.err)
					} else if r.c.Source != tt.path {
						t.Errorf("%s: Source = %q, want %q", load.name, r.c.Source, tt.path)
					}
					continue
				}
				if r.c != nil || r.err == nil {
					t.Fatalf("%s = %v, %v; want an error", load.name, r.c, r.err)
				}
				if want := "read config: " + tt.path + tt.wantErr; !strings.HasPrefix(r.err.Error(), want) {
					t.Errorf("%s error\n got %v\nwant %s...", load.name, r.err, want)
				}
				if errors.Is(r.err, fs.ErrNotExist) || invalid(r.err) {
					t.Errorf("%s error %v matches fs.ErrNotExist or holds an *Error", load.name, r.err)
				}
			}
		})
	}
}

func TestLoadOrDefaultDanglingSymlink(t *testing.T) {
	path := filepath.Join(t.TempDir(), "link.yaml")
	if err := os.Symlink("absent.yaml", path); err != nil {
		t.Fatal(err)
	}
	if c, err := LoadOrDefault(path); err != nil || c.Source != "" {
		t.Errorf("LoadOrDefault(dangling symlink) = %v, %v; want the defaults", c, err)
	}
}
