package bans

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
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

// TestListPartitions: the walk finds remote and local isolated
// partitions, nested ones apart from their parent, skips an invalid
// one and cgroups with no exclusive CPUs of the isolated set; and
// Housekeeping keeps the CPUs of partitions the IRQ bans cover in part.
func TestListPartitions(t *testing.T) {
	sys := t.TempDir()
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(sys, "fs", "cgroup", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for dir, files := range map[string][2]string{ // exclusive.effective, partition
		"kubepods.slice":                          {"2-7\n", "member\n"},
		"kubepods.slice/pod-a.slice":              {"2-3\n", "member\n"},
		"kubepods.slice/pod-a.slice/crio-a.scope": {"2-3\n", "isolated\n"},
		"kubepods.slice/pod-b.slice":              {"4-5\n", "member\n"},
		"kubepods.slice/pod-b.slice/crio-b.scope": {"4-5\n", "isolated invalid (Parent is not a partition root)\n"},
		"local":                    {"6-7\n", "isolated\n"},
		"local/inner":              {"7\n", "isolated\n"},
		"system.slice":             {"\n", "member\n"},
		"system.slice/ssh.service": {"\n", "member\n"},
		"kubepods.slice/pod-a.slice/crio-a.scope/x":   {"2\n", "member\n"},
		"kubepods.slice/pod-a.slice/crio-a.scope/x/y": {"2\n", "isolated\n"},
	} {
		write(dir+"/cpuset.cpus.exclusive.effective", files[0])
		write(dir+"/cpuset.cpus.partition", files[1])
	}
	isolated := cpumask.New(2, 3, 6, 7)
	parts, err := ListPartitions(sys, isolated)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range parts {
		got = append(got, p.String())
	}
	slices.Sort(got)
	if want := []string{"2", "3", "6", "7"}; !slices.Equal(got, want) {
		t.Errorf("partitions %v, want %v (crio-a less x/y, x/y, local less inner, inner)", got, want)
	}
	two := []cpumask.Mask{cpumask.New(2, 3), cpumask.New(6, 7)}
	for _, tc := range []struct{ irq, want string }{{"3", "2"}, {"2-3", ""}, {"", ""}, {"3,7", "2,6"}, {"0-1", ""}} {
		irq, _ := cpumask.ParseList(tc.irq)
		if hk := Housekeeping(two, irq); hk.String() != tc.want {
			t.Errorf("Housekeeping(2-3 and 6-7, bans %q) = %s, want %q", tc.irq, hk, tc.want)
		}
	}
	if parts, err := ListPartitions(t.TempDir(), isolated); err != nil || len(parts) != 0 {
		t.Errorf("no cgroup tree: %v, %v; want none", parts, err)
	}
}
