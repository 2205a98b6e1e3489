package bans

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// TestReadPartitions: the kernel's list as written (with its newline,
// empty when no partition is isolated), a missing file as none, and a
// malformed one as an error naming the file and the value.
func TestReadPartitions(t *testing.T) {
	sys := t.TempDir()
	path := PartitionsFile(sys)
	if want := filepath.Join(sys, "fs", "cgroup", "cpuset.cpus.isolated"); path != want {
		t.Fatalf("PartitionsFile = %s, want %s", path, want)
	}
	if m, err := ReadPartitions(sys); err != nil || !m.IsEmpty() {
		t.Errorf("missing file: %v, %v; want none", m, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{"\n", ""},
		{"6-7\n", "6-7"},
		{"2,4-5,64\n", "2,4-5,64"},
	} {
		if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
			t.Fatal(err)
		}
		if m, err := ReadPartitions(sys); err != nil || m.String() != tc.want {
			t.Errorf("%q: %v, %v; want %s", tc.in, m, err, tc.want)
		}
	}
	if err := os.WriteFile(path, []byte("6-x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadPartitions(sys)
	if err == nil || !errors.Is(err, kernfs.ErrMalformed) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `"6-x"`) {
		t.Errorf("malformed: %v; want ErrMalformed naming %s and \"6-x\"", err, path)
	}
}

// TestPartitionsAbsent says why there is nothing to read: no cgroup v2
// root (v1, hybrid), or a v2 root without the file (before 6.8).
func TestPartitionsAbsent(t *testing.T) {
	sys := t.TempDir()
	root := filepath.Join(sys, "fs", "cgroup")
	if why := PartitionsAbsent(sys); !strings.Contains(why, "cgroup v1") || !strings.Contains(why, root) {
		t.Errorf("no cgroup2: %q, want it to name cgroup v1 and %s", why, root)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpuset cpu io memory pids\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if why := PartitionsAbsent(sys); !strings.Contains(why, "before 6.8") || !strings.Contains(why, PartitionsFile(sys)) {
		t.Errorf("cgroup2 without the file: %q, want it to name the file and 6.8", why)
	}
	if err := os.WriteFile(PartitionsFile(sys), []byte("\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if why := PartitionsAbsent(sys); why != "" {
		t.Errorf("with the file: %q, want \"\"", why)
	}
}
