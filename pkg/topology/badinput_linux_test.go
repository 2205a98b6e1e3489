package topology_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/topology"
)

// maxErrLen bounds every error about a bad file: the path, what is wrong
// and at most ~100 bytes of the value, however long the file.
const maxErrLen = 512

// TestBadInput checks that garbage, oversized, blocking or inconsistent
// files give a short error naming the file, wrapping kernfs.ErrMalformed,
// and never hang or take the value whole.
func TestBadInput(t *testing.T) {
	const (
		node = "sys/devices/system/node/"
		cpu  = "sys/devices/system/cpu/"
	)
	const tmpl = "$ROOT" // the tree's root in want
	big := strings.Repeat("x", 5<<20)
	page := strings.Repeat("x", 60<<10) // under the read limit: reaches the parser
	fifo := func(rel string) func(*testing.T, *fakesys.Tree) {
		return func(t *testing.T, tr *fakesys.Tree) {
			tr.Remove(rel)
			if err := syscall.Mkfifo(tr.Path(rel), 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}
	}
	write := func(rel, content string) func(*testing.T, *fakesys.Tree) {
		return func(_ *testing.T, tr *fakesys.Tree) { tr.WriteFile(rel, content) }
	}
	for _, tc := range []struct {
		name    string
		machine fakesys.Machine // LocalSpreadPatch when zero
		corrupt func(*testing.T, *fakesys.Tree)
		file    string // the error names it
		want    string // and says this
	}{
		{name: "5 MB cpulist", corrupt: write(node+"node1/cpulist", big), file: "node1/cpulist", want: "longer than the limit of 65536 bytes"},
		{name: "5 MB distance", corrupt: write(node+"node2/distance", big), file: "node2/distance", want: "longer than the limit of 65536 bytes"},
		{name: "5 MB online", corrupt: write(cpu+"online", big), file: "cpu/online", want: "longer than the limit of 65536 bytes"},
		{name: "60 KB garbage cpulist", corrupt: write(node+"node1/cpulist", page),
			file: "node1/cpulist", want: `"... (61440 bytes): element of 61440 bytes: not a CPU number`},
		{name: "60 KB garbage distance", corrupt: write(node+"node2/distance", page),
			file: "node2/distance", want: `"... (61440 bytes) has 1 entries, want one per online node (4)`},
		{name: "60 KB garbage distance entries", corrupt: write(node+"node2/distance", "30 70 10 "+page),
			file: "node2/distance", want: `entry 3 is "xxx`},
		{name: "60 KB garbage package id", corrupt: write(cpu+"cpu0/topology/physical_package_id", page),
			file: "cpu0/topology/physical_package_id", want: `"... (61440 bytes) is not an integer`},
		{name: "FIFO cpulist", corrupt: fifo(node + "node1/cpulist"), file: "node1/cpulist", want: "not a regular file (a named pipe)"},
		{name: "FIFO online", corrupt: fifo(cpu + "online"), file: "cpu/online", want: "not a regular file (a named pipe)"},
		{name: "self-distance above 10", corrupt: write(node+"node2/distance", "30 70 11 50\n"),
			file: "node2/distance", want: "entry 2, node 2's distance to itself, is 11, want 10 (LOCAL_DISTANCE)"},
		{name: "self-distance of a sparse node id", machine: fakesys.Machine{
			Online: "0-3",
			Nodes: []fakesys.Node{
				{ID: 0, CPUs: "0-1", Distance: []int{10, 20}},
				{ID: 4, CPUs: "2-3", Distance: []int{20, 20}},
			},
		}, file: "node4/distance", want: "entry 1, node 4's distance to itself, is 20, want 10"},
		{name: "empty cpulist of a node with online CPUs", corrupt: write(node+"node1/cpulist", "\n"),
			file: "cpu/online", want: `cpulist (` + tmpl + "/sys/devices/system/node/node*/cpulist)"},
		{name: "online CPU on no node", machine: fakesys.Machine{
			Online: "0-5",
			Nodes: []fakesys.Node{
				{ID: 0, CPUs: "0-1", Distance: []int{10, 20}},
				{ID: 1, CPUs: "2-3", Distance: []int{20, 10}},
			},
		}, file: "cpu/online", want: `online CPUs "4-5" are in no node's cpulist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.machine
			if m.Online == "" {
				m = fakesys.LocalSpreadPatch()
			}
			tree := fakesys.New(t)
			tree.AddMachine(m)
			if tc.corrupt != nil {
				tc.corrupt(t, tree)
			}
			var err error
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, err = topology.NewFS(tree.Sys()).ReadDetail()
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Read blocked")
			}
			if err == nil {
				t.Fatalf("Read succeeded, want an error naming %s", tc.file)
			}
			msg := err.Error()
			want := strings.ReplaceAll(tc.want, tmpl, tree.Root)
			if !strings.Contains(msg, tc.file) || !strings.Contains(msg, want) {
				t.Errorf("error %.600q does not name %s and say %q", msg, tc.file, want)
			}
			if len(msg) > maxErrLen {
				t.Errorf("error is %d bytes, want at most %d: %.600q", len(msg), maxErrLen, msg)
			}
			if !errors.Is(err, kernfs.ErrMalformed) {
				t.Errorf("error %v does not wrap kernfs.ErrMalformed", err)
			}
		})
	}
}

// TestMemoryOnlyNodesAndNoNodeDirectory checks what stays valid: a node
// with an empty cpulist while every online CPU is on another node (CXL
// memory), and a tree without devices/system/node (the implicit node 0).
func TestMemoryOnlyNodesAndNoNodeDirectory(t *testing.T) {
	for _, m := range []fakesys.Machine{
		{Online: "0-3", Nodes: []fakesys.Node{
			{ID: 0, CPUs: "0-3", Distance: []int{10, 20}},
			{ID: 1, CPUs: "", Distance: []int{20, 10}},
		}},
		{Online: "0-3"},
		{Online: "0-3", Possible: "0-7", Nodes: []fakesys.Node{ // offline CPUs are on no list
			{ID: 0, CPUs: "0-3", Distance: []int{10}},
		}},
	} {
		tree := fakesys.New(t)
		tree.AddMachine(m)
		if _, err := topology.NewFS(tree.Sys()).Read(); err != nil {
			t.Errorf("Read(%+v) = %v, want success", m, err)
		}
	}
}
