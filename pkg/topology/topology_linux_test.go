package topology_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/topology"
)

// hopMasks rebuilds sched_numa_hop_mask(node, h) for every level h from
// the rings: hop mask h is the union of rings 0 to h (rings over every
// online CPU, as the kernel's masks hold online CPUs only).
func hopMasks(s *topology.Snapshot, node int) []string {
	var out []string
	var m cpumask.Mask
	for _, ring := range s.Rings(node, s.Online()) {
		m = m.Or(cpumask.New(ring...))
		out = append(out, m.String())
	}
	return out
}

func TestNoNodeDirectory(t *testing.T) {
	s := readMachine(t, fakesys.Machine{Online: "0-3"})
	if !s.ImplicitNode() {
		t.Error("ImplicitNode() = false, want true")
	}
	if got := cpuNodes(s); !slices.Equal(got, []int{0}) {
		t.Errorf("CPUNodes = %v, want [0]", got)
	}
	if got := s.Spread(0, s.Online()); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("spread = %v", got)
	}
	if got := s.Levels(); !slices.Equal(got, []int{10}) {
		t.Errorf("levels = %v, want [10]", got)
	}
	if s.NodeOfCPU(2) != 0 {
		t.Errorf("NodeOfCPU(2) = %d, want 0", s.NodeOfCPU(2))
	}
}

// TestLevelsWithoutNewCPUs is the example of docs/kernel.md §1.1: a level can
// add no CPU for a node, and the levels are global.
func TestLevelsWithoutNewCPUs(t *testing.T) {
	s := readMachine(t, fakesys.Machine{
		Online: "0-5",
		Nodes: []fakesys.Node{
			{ID: 0, CPUs: "0-1", Distance: []int{10, 12, 20}},
			{ID: 1, CPUs: "2-3", Distance: []int{12, 10, 15}},
			{ID: 2, CPUs: "4-5", Distance: []int{20, 15, 10}},
		},
	})
	if got := s.Levels(); !slices.Equal(got, []int{10, 12, 15, 20}) {
		t.Fatalf("levels = %v", got)
	}
	for node, want := range map[int][]string{
		0: {"0-1", "0-3", "0-3", "0-5"},
		2: {"4-5", "4-5", "2-5", "0-5"},
	} {
		if got := hopMasks(s, node); !slices.Equal(got, want) {
			t.Errorf("hop masks of node %d = %v, want %v", node, got, want)
		}
	}
	if got := s.Rings(0, s.Online()); len(got) != 4 || len(got[2]) != 0 {
		t.Errorf("rings of node 0 = %v, want an empty ring at level 15", got)
	}
	if got := s.HopLevel(0, 5); got != 3 {
		t.Errorf("HopLevel(0, 5) = %d, want 3", got)
	}
}

func TestCPULessNode(t *testing.T) {
	s := readMachine(t, fakesys.Machine{
		Online: "0-7",
		Nodes: []fakesys.Node{
			{ID: 0, CPUs: "0-3", Distance: []int{10, 20, 30}},
			{ID: 1, CPUs: "", Distance: []int{20, 10, 15}}, // memory only (CXL)
			{ID: 2, CPUs: "4-7", Distance: []int{30, 15, 10}},
		},
	})
	// The CPU-less node's distances create no level.
	if got := s.Levels(); !slices.Equal(got, []int{10, 30}) {
		t.Errorf("levels = %v, want [10 30]", got)
	}
	// The kernel's hop masks of a CPU-less node are NULL, so it spreads
	// over the nearest node that has CPUs.
	if got := s.SpreadNode(1); got != 2 {
		t.Errorf("SpreadNode(1) = %d, want nearest CPU node 2", got)
	}
	if got := s.Spread(1, s.Online()); !slices.Equal(got, []int{4, 5, 6, 7, 0, 1, 2, 3}) {
		t.Errorf("spread of CPU-less node = %v", got)
	}
	if got := cpuNodes(s); !slices.Equal(got, []int{0, 2}) {
		t.Errorf("CPUNodes = %v", got)
	}
}

func TestCPULessNodeTieGoesToLowestID(t *testing.T) {
	s := readMachine(t, fakesys.Machine{
		Online: "0-3",
		Nodes: []fakesys.Node{
			{ID: 0, CPUs: "0-1", Distance: []int{10, 20, 20}},
			{ID: 1, CPUs: "2-3", Distance: []int{20, 10, 20}},
			{ID: 3, CPUs: "", Distance: []int{20, 20, 10}},
		},
	})
	if got := s.SpreadNode(3); got != 0 {
		t.Errorf("SpreadNode(3) = %d, want 0 (tie, lowest id)", got)
	}
}

// TestSparseNodeIDs checks that distance column k is the k-th online
// node, not node id k.
func TestSparseNodeIDs(t *testing.T) {
	s := readMachine(t, fakesys.Machine{
		Online: "0-5",
		Nodes: []fakesys.Node{
			{ID: 0, CPUs: "0-1", Distance: []int{10, 30, 20}},
			{ID: 2, CPUs: "2-3", Distance: []int{30, 10, 20}},
			{ID: 5, CPUs: "4-5", Distance: []int{20, 20, 10}},
		},
	})
	if got := s.Distance(0, 5); got != 20 {
		t.Errorf("Distance(0, 5) = %d, want 20", got)
	}
	if got := s.Distance(0, 2); got != 30 {
		t.Errorf("Distance(0, 2) = %d, want 30", got)
	}
	if got := s.Distance(0, 1); got != -1 {
		t.Errorf("Distance to offline node = %d, want -1", got)
	}
	if got := s.Spread(0, s.Online()); !slices.Equal(got, []int{0, 1, 4, 5, 2, 3}) {
		t.Errorf("spread of node 0 = %v", got)
	}
	if got := s.Spread(2, s.Online()); !slices.Equal(got, []int{2, 3, 4, 5, 0, 1}) {
		t.Errorf("spread of node 2 = %v, want nodes 2, 5, 0 by distance", got)
	}
}

func TestOfflineCPUs(t *testing.T) {
	s := readMachine(t, fakesys.Machine{
		Online:   "0-2,4-6",
		Possible: "0-7",
		Nodes: []fakesys.Node{
			{ID: 0, CPUs: "0-3", Distance: []int{10, 20}},
			{ID: 1, CPUs: "4-7", Distance: []int{20, 10}},
		},
	})
	if got := s.Spread(1, s.Online()); !slices.Equal(got, []int{4, 5, 6, 0, 1, 2}) {
		t.Errorf("spread = %v, want offline CPUs 3 and 7 left out", got)
	}
	if s.Possible().String() != "0-7" {
		t.Errorf("possible = %s", s.Possible())
	}
	if _, ok := s.CPU(3); ok {
		t.Error("CPU(3) found, but CPU 3 is offline")
	}
	if got := s.HopLevel(1, 7); got != -1 {
		t.Errorf("HopLevel of offline CPU = %d, want -1", got)
	}
}

func TestAsymmetricDistances(t *testing.T) {
	s := readMachine(t, fakesys.Machine{
		Online: "0-3",
		Nodes: []fakesys.Node{
			{ID: 0, CPUs: "0-1", Distance: []int{10, 20}},
			{ID: 1, CPUs: "2-3", Distance: []int{30, 10}},
		},
	})
	if got := s.Levels(); !slices.Equal(got, []int{10, 20, 30}) {
		t.Errorf("levels = %v", got)
	}
	// Row j decides node j's masks.
	if got := hopMasks(s, 0); !slices.Equal(got, []string{"0-1", "0-3", "0-3"}) {
		t.Errorf("node 0 masks = %v", got)
	}
	if got := hopMasks(s, 1); !slices.Equal(got, []string{"2-3", "2-3", "0-3"}) {
		t.Errorf("node 1 masks = %v", got)
	}
}

func TestSMTFiles(t *testing.T) {
	base := fakesys.Machine{
		Online:   "0-3",
		Siblings: func(c int) string { return map[int]string{0: "0,2", 2: "0,2", 1: "1,3", 3: "1,3"}[c] },
		Nodes:    []fakesys.Node{{ID: 0, CPUs: "0-3", Distance: []int{10}}},
	}
	for _, tc := range []struct {
		name     string
		mutate   func(*fakesys.Machine)
		siblings string
	}{
		{"core_cpus_list", func(*fakesys.Machine) {}, "1,3"},
		{"thread_siblings_list fallback", func(m *fakesys.Machine) { m.NoCoreCPUs = true }, "1,3"},
		{"no SMT files", func(m *fakesys.Machine) { m.NoSMTFiles = true }, "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := base
			tc.mutate(&m)
			s := readMachine(t, m)
			if got := s.Siblings(3).String(); got != tc.siblings {
				t.Errorf("Siblings(3) = %s, want %s", got, tc.siblings)
			}
		})
	}
}

func TestIsolatedAndNohzFull(t *testing.T) {
	s := readMachine(t, fakesys.Machine{Online: "0-7", Isolated: "2-3", NohzFull: "3-4"})
	if s.Isolated().String() != "2-3" || s.NohzFull().String() != "3-4" {
		t.Errorf("isolated = %q, nohz_full = %q", s.Isolated(), s.NohzFull())
	}
	s = readMachine(t, fakesys.Machine{Online: "0-7"})
	if !s.Isolated().IsEmpty() || !s.NohzFull().IsEmpty() {
		t.Errorf("isolated = %q, nohz_full = %q, want empty", s.Isolated(), s.NohzFull())
	}
	// Debian's 6.1 kernel has CONFIG_NO_HZ_FULL; booted without
	// nohz_full= it prints "(null)" (seen in the QEMU guest).
	s = readMachine(t, fakesys.Machine{Online: "0-7", NohzFull: "(null)"})
	if !s.NohzFull().IsEmpty() {
		t.Errorf("nohz_full \"(null)\" = %q, want empty", s.NohzFull())
	}
}

func TestSpreadAllowedAndNoNode(t *testing.T) {
	s := readMachine(t, fakesys.LocalSpreadPatch())
	allowed := fakesys.MustMask(t, "1-3,6,9-15")
	if got := s.Spread(0, allowed); !slices.Equal(got, []int{1, 2, 3, 6, 9, 10, 11, 12, 13, 14, 15}) {
		t.Errorf("spread over allowed = %v", got)
	}
	if got := s.Spread(topology.NoNode, allowed); !slices.Equal(got, allowed.CPUs()) {
		t.Errorf("NoNode spread = %v, want CPU id order", got)
	}
	if got := s.Spread(7, allowed); !slices.Equal(got, allowed.CPUs()) {
		t.Errorf("unknown node spread = %v, want CPU id order", got)
	}
	if got := s.Spread(0, cpumask.Mask{}); len(got) != 0 {
		t.Errorf("spread with nothing allowed = %v, want none", got)
	}
}

func TestMalformedFiles(t *testing.T) {
	good := fakesys.LocalSpreadPatch()
	for _, tc := range []struct {
		name    string
		corrupt func(*fakesys.Tree)
		file    string // the error must name this file
		parse   bool   // and wrap kernfs.ErrMalformed
	}{
		{"online garbage", func(tr *fakesys.Tree) { tr.WriteFile("sys/devices/system/cpu/online", "0-3x\n") }, "cpu/online", true},
		{"online reversed", func(tr *fakesys.Tree) { tr.WriteFile("sys/devices/system/cpu/online", "3-0\n") }, "cpu/online", true},
		{"online empty", func(tr *fakesys.Tree) { tr.WriteFile("sys/devices/system/cpu/online", "\n") }, "cpu/online", true},
		{"online missing", func(tr *fakesys.Tree) { tr.Remove("sys/devices/system/cpu/online") }, "cpu/online", false},
		{"node online missing", func(tr *fakesys.Tree) { tr.Remove("sys/devices/system/node/online") }, "node/online", false},
		{"cpulist garbage", func(tr *fakesys.Tree) { tr.WriteFile("sys/devices/system/node/node1/cpulist", "4,,5\n") }, "node1/cpulist", true},
		{"cpulist missing", func(tr *fakesys.Tree) { tr.Remove("sys/devices/system/node/node2/cpulist") }, "node2/cpulist", false},
		{"cpu on two nodes", func(tr *fakesys.Tree) { tr.WriteFile("sys/devices/system/node/node1/cpulist", "3-5\n") }, "node1/cpulist", true},
		{"distance not a number", func(tr *fakesys.Tree) { tr.WriteFile("sys/devices/system/node/node0/distance", "10 x 30 70\n") }, "node0/distance", true},
		{"distance too short", func(tr *fakesys.Tree) { tr.WriteFile("sys/devices/system/node/node3/distance", "70 30 10\n") }, "node3/distance", true},
		{"distance below 10", func(tr *fakesys.Tree) { tr.WriteFile("sys/devices/system/node/node2/distance", "30 70 0 50\n") }, "node2/distance", true},
		{"distance missing", func(tr *fakesys.Tree) { tr.Remove("sys/devices/system/node/node2/distance") }, "node2/distance", false},
		{"isolated garbage", func(tr *fakesys.Tree) { tr.WriteFile("sys/devices/system/cpu/isolated", "two\n") }, "cpu/isolated", true},
		{"siblings garbage", func(tr *fakesys.Tree) {
			tr.WriteFile("sys/devices/system/cpu/cpu5/topology/core_cpus_list", "5-\n")
		}, "cpu5/topology/core_cpus_list", true},
		{"siblings without the CPU", func(tr *fakesys.Tree) {
			tr.WriteFile("sys/devices/system/cpu/cpu5/topology/core_cpus_list", "6\n")
		}, "cpu5/topology/core_cpus_list", true},
		{"package id garbage", func(tr *fakesys.Tree) {
			tr.WriteFile("sys/devices/system/cpu/cpu0/topology/physical_package_id", "zero\n")
		}, "cpu0/topology/physical_package_id", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := fakesys.New(t)
			tree.AddMachine(good)
			tc.corrupt(tree)
			s, err := topology.NewFS(tree.Sys()).ReadDetail()
			if err == nil {
				t.Fatalf("Read succeeded (%d nodes), want an error naming %s", len(s.Nodes()), tc.file)
			}
			if !strings.Contains(err.Error(), tc.file) {
				t.Errorf("error %q does not name %s", err, tc.file)
			}
			if tc.parse != errors.Is(err, kernfs.ErrMalformed) {
				t.Errorf("errors.Is(err, ErrMalformed) = %v, want %v (err: %v)", !tc.parse, tc.parse, err)
			}
			if !tc.parse && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("missing file error %q does not wrap os.ErrNotExist", err)
			}
		})
	}
}

// TestReadSkipsDetail: Read, which every round calls, reads packages and
// caches (the planner's cells) but not possible: a garbage possible does
// not fail it, and its Possible is empty; ReadDetail reads it.
func TestReadSkipsDetail(t *testing.T) {
	tree := fakesys.New(t)
	tree.AddMachine(fakesys.Machine{Online: "0-3", Package: func(c int) int { return c / 2 },
		LLC: func(c int) string { return "0-3" }})
	fs := topology.NewFS(tree.Sys())
	d, err := fs.ReadDetail()
	if err != nil {
		t.Fatal(err)
	}
	tree.WriteFile("sys/devices/system/cpu/possible", "zero\n")
	s, err := fs.Read()
	if err != nil {
		t.Fatalf("Read failed on a file it need not read: %v", err)
	}
	for _, snap := range []*topology.Snapshot{d, s} {
		if c, _ := snap.CPU(3); c.Package != 1 || c.LLC.String() != "0-3" {
			t.Errorf("CPU 3 = %+v, want package 1, LLC 0-3 (the planner's cells)", c)
		}
	}
	if !s.Possible().IsEmpty() || d.Possible().String() != "0-3" {
		t.Errorf("possible: Read %q, ReadDetail %q; want empty and 0-3", s.Possible(), d.Possible())
	}
}

// TestReaderKeepsCores: a Reader reads a CPU's siblings once; a sibling
// that was offline joins its core's group when it comes online, and
// Forget makes the next Read read them all again.
func TestReaderKeepsCores(t *testing.T) {
	tree := fakesys.New(t)
	// CPUs 0-3, cores {0,2} and {1,3}; CPU 3 offline.
	tree.AddMachine(fakesys.Machine{Online: "0-2", Possible: "0-3",
		Siblings: func(c int) string { return fmt.Sprintf("%d,%d", c%2, c%2+2) }})
	r := topology.NewReader(topology.NewFS(tree.Sys()))
	s, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Siblings(1).String(); got != "1" {
		t.Fatalf("CPU 1 siblings = %s with 3 offline, want 1", got)
	}
	// Garbage in a file already read is not read again.
	tree.WriteFile("sys/devices/system/cpu/cpu0/topology/core_cpus_list", "zero\n")
	// CPU 3 comes online: the kernel adds it to CPU 1's list too.
	tree.WriteFile("sys/devices/system/cpu/online", "0-3\n")
	tree.WriteFile("sys/devices/system/cpu/cpu3/topology/core_cpus_list", "1,3\n")
	s, err = r.Read()
	if err != nil {
		t.Fatalf("Read read a kept CPU's siblings again: %v", err)
	}
	if got := s.Siblings(1).String(); got != "1,3" {
		t.Errorf("CPU 1 siblings = %s after 3 came online, want 1,3", got)
	}
	if got := s.Siblings(0).String(); got != "0,2" {
		t.Errorf("CPU 0 siblings = %s, want the kept 0,2", got)
	}
	r.Forget()
	if _, err := r.Read(); err == nil || !strings.Contains(err.Error(), "cpu0/topology/core_cpus_list") {
		t.Errorf("Read after Forget = %v, want cpu0's garbage file read again", err)
	}
}

// TestReaderKeepsBootMasksAndDistances: after the first read a Reader
// reads only the CPUs and nodes' cpulists; isolated, nohz_full and the
// distance rows are read again when the online nodes change or after
// Forget.
func TestReaderKeepsBootMasksAndDistances(t *testing.T) {
	tree := fakesys.New(t)
	m := fakesys.QEMUGuest()
	m.Isolated, m.NohzFull = "7", "6-7"
	tree.AddMachine(m)
	r := topology.NewReader(topology.NewFS(tree.Sys()))
	if _, err := r.Read(); err != nil {
		t.Fatal(err)
	}
	// Garbage in the kept files is not read; CPU 3 going offline is.
	for _, f := range []string{"cpu/isolated", "cpu/nohz_full", "node/node0/distance", "node/node3/distance"} {
		tree.WriteFile("sys/devices/system/"+f, "garbage\n")
	}
	tree.WriteFile("sys/devices/system/cpu/online", "0-2,4-7\n")
	tree.WriteFile("sys/devices/system/node/node1/cpulist", "2\n")
	s, err := r.Read()
	if err != nil {
		t.Fatalf("Read read a kept file again: %v", err)
	}
	if got := s.Online().String(); got != "0-2,4-7" {
		t.Errorf("online = %s, want 0-2,4-7", got)
	}
	if n := s.Nodes()[1]; n.ID != 1 || n.CPUs.String() != "2" {
		t.Errorf("node 1 CPUs = %s, want the re-read 2", n.CPUs)
	}
	if s.Isolated().String() != "7" || s.NohzFull().String() != "6-7" || s.Distance(0, 3) != 22 {
		t.Errorf("isolated %s, nohz_full %s, distance 0-3 %d; want the kept 7, 6-7, 22", s.Isolated(), s.NohzFull(), s.Distance(0, 3))
	}
	// Node 3 goes away (its CPUs first): every row is read again.
	tree.WriteFile("sys/devices/system/cpu/online", "0-2,4-5\n")
	tree.WriteFile("sys/devices/system/node/online", "0-2\n")
	if _, err := r.Read(); err == nil || !strings.Contains(err.Error(), "node0/distance") {
		t.Errorf("Read after the nodes changed = %v, want node0's distance read again", err)
	}
	tree.WriteFile("sys/devices/system/node/node0/distance", "10 12 20\n")
	tree.WriteFile("sys/devices/system/node/node1/distance", "12 10 22\n")
	tree.WriteFile("sys/devices/system/node/node2/distance", "20 22 10\n")
	if s, err = r.Read(); err != nil || s.Distance(1, 2) != 22 {
		t.Fatalf("Read with 3 nodes: %v", err)
	}
	r.Forget()
	if _, err := r.Read(); err == nil || !strings.Contains(err.Error(), "cpu/isolated") {
		t.Errorf("Read after Forget = %v, want isolated read again", err)
	}
}

// cpuNodes returns the ids of the nodes that have online CPUs (the
// kernel's N_CPU state), ascending.
func cpuNodes(s *topology.Snapshot) []int {
	var ids []int
	for _, n := range s.Nodes() {
		if !n.CPUs.IsEmpty() {
			ids = append(ids, n.ID)
		}
	}
	return ids
}

// TestTrailingNUL reads a machine whose topology and node CPU lists end
// in the string's NUL, as kernels from 5.15 print them (seen in hwloc's
// gather of a Kunpeng 920, tests/hwloc/linux/128arm-2pa2n8cluster4co),
// as the same machine without.
func TestTrailingNUL(t *testing.T) {
	m := fakesys.Machine{
		Online:   "0-7",
		Siblings: func(c int) string { return fmt.Sprintf("%d,%d", c%4, c%4+4) },
		Package:  func(c int) int { return c % 4 / 2 },
		LLC:      func(c int) string { return fmt.Sprintf("%d-%d,%d-%d", c%4/2*2, c%4/2*2+1, c%4/2*2+4, c%4/2*2+5) },
		Nodes:    []fakesys.Node{{ID: 0, CPUs: "0-1,4-5", Distance: []int{10, 20}}, {ID: 1, CPUs: "2-3,6-7", Distance: []int{20, 10}}},
	}
	want := readMachine(t, m)
	tree := fakesys.New(t)
	tree.AddMachine(m)
	for _, rel := range []string{"cpu/cpu%d/topology/core_cpus_list", "cpu/cpu%d/topology/package_cpus_list", "node/node%d/cpulist"} {
		for c := range 8 {
			p := tree.Path("sys/devices/system/" + fmt.Sprintf(rel, c))
			b, err := os.ReadFile(p)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			tree.WriteFile("sys/devices/system/"+fmt.Sprintf(rel, c), string(b)+"\x00")
		}
	}
	got, err := topology.NewFS(tree.Sys()).ReadDetail()
	if err != nil {
		t.Fatal(err)
	}
	for c := range 8 {
		g, _ := got.CPU(c)
		w, _ := want.CPU(c)
		if g.Node != w.Node || !g.Siblings.Equal(w.Siblings) || g.Package != w.Package || !g.LLC.Equal(w.LLC) {
			t.Errorf("CPU %d: %+v, want %+v", c, g, w)
		}
	}
}
