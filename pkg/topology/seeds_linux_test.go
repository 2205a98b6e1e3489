package topology_test

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/topology"
)

func readMachine(t testing.TB, m fakesys.Machine) *topology.Snapshot {
	t.Helper()
	tree := fakesys.New(t)
	tree.AddMachine(m)
	s, err := topology.NewFS(tree.Sys()).ReadDetail()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Fields(s) {
		var n int
		fmt.Sscan(f, &n)
		out = append(out, n)
	}
	return out
}

// TestSeedFourNodeOrders reproduces the published table of
// cpumask_local_spread() orders for all four nodes, through the real
// sysfs reader.
func TestSeedFourNodeOrders(t *testing.T) {
	s := readMachine(t, fakesys.LocalSpreadPatch())
	want := map[int]string{
		0: "0   1   2   3   6   7   4   5   8   9  10  11  12  13  14  15",
		1: "4   5   8   9  10  11  12  13  14  15   0   1   2   3   6   7",
		2: "6   7   0   1   2   3   8   9  10  11  12  13  14  15   4   5",
		3: "8   9  10  11  12  13  14  15   4   5   6   7   0   1   2   3",
	}
	if got := s.Levels(); !slices.Equal(got, []int{10, 30, 50, 70}) {
		t.Errorf("levels = %v, want [10 30 50 70]", got)
	}
	for node, w := range want {
		if got := s.Spread(node, s.Online()); !slices.Equal(got, ints(w)) {
			t.Errorf("node %d spread = %v\nwant %v", node, got, ints(w))
		}
	}
}

// epyc7763 is the 16-node AMD EPYC 7763 of the mlx5e patch: node n holds
// CPUs 8n..8n+7 and their SMT siblings 128+8n..128+8n+7; distances are
// 10 local, 11 within a quadrant of 4 nodes, 12 within a socket, 32 across.
func epyc7763() fakesys.Machine {
	m := fakesys.Machine{
		Online:   "0-255",
		Siblings: func(c int) string { return fmt.Sprintf("%d,%d", c%128, c%128+128) },
		Package:  func(c int) int { return (c % 128) / 64 },
		LLC: func(c int) string {
			n := (c % 128) / 8
			return fmt.Sprintf("%d-%d,%d-%d", 8*n, 8*n+7, 128+8*n, 128+8*n+7)
		},
	}
	dist := fakesys.TieredDistances(16, 32, fakesys.Tier{Size: 4, Distance: 11}, fakesys.Tier{Size: 8, Distance: 12})
	for n := range 16 {
		m.Nodes = append(m.Nodes, fakesys.Node{
			ID: n, CPUs: fmt.Sprintf("%d-%d,%d-%d", 8*n, 8*n+7, 128+8*n, 128+8*n+7), Distance: dist[n],
		})
	}
	return m
}

// TestSeedMlx5AfterHints reproduces the 127 "After" affinity hints of the
// mlx5e patch (NIC on node 14) from the hint file copied verbatim out of
// patch 8/9 of the series (docs/kernel.md §7.1, §1.6): the i-th
// completion vector's hint is the i-th CPU of node 14's spread order.
func TestSeedMlx5AfterHints(t *testing.T) {
	f, err := os.Open("testdata/mlx5e-epyc7763-after-hints.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var hints []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		_, hex, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			t.Fatalf("bad hint line %q", sc.Text())
		}
		m, err := cpumask.ParseHex(hex)
		if err != nil {
			t.Fatal(err)
		}
		if m.Weight() != 1 {
			t.Fatalf("hint %q has %d CPUs, want 1", hex, m.Weight())
		}
		hints = append(hints, m.First())
	}
	if len(hints) != 127 {
		t.Fatalf("read %d hints, want 127", len(hints))
	}

	s := readMachine(t, epyc7763())
	if got := s.Levels(); !slices.Equal(got, []int{10, 11, 12, 32}) {
		t.Errorf("levels = %v, want [10 11 12 32]", got)
	}
	order := s.Spread(14, s.Online())
	if len(order) != 256 {
		t.Fatalf("spread has %d CPUs, want 256", len(order))
	}
	if !slices.Equal(order[:127], hints) {
		for i := range hints {
			if order[i] != hints[i] {
				t.Fatalf("vector %d: spread gives CPU %d, the patch's hint is CPU %d", i, order[i], hints[i])
			}
		}
	}
	// The notes decode the hints as these ranges; check the hop rings too.
	wantRings := []string{"112-119,240-247", "96-111,120-127,224-239,248-255", "64-95,192-223", "0-63,128-191"}
	for h, ring := range s.Rings(14, s.Online()) {
		if got := cpumask.New(ring...).String(); got != wantRings[h] {
			t.Errorf("ring %d = %s, want %s", h, got, wantRings[h])
		}
	}
	cpu, _ := s.CPU(240)
	if cpu.Node != 14 || cpu.Package != 1 || cpu.Core != 112 || cpu.Siblings.String() != "112,240" || cpu.LLC.String() != "112-119,240-247" {
		t.Errorf("CPU 240 = %+v", cpu)
	}
}
