package measure

import (
	"sort"
	"strings"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// Topo is the NUMA view of one guest state: which node each CPU is on
// and the distance table, as the guest's sysfs showed them.
type Topo struct {
	Nodes    []guestinfo.Node
	Online   cpumask.Mask
	Isolated cpumask.Mask // isolated ∪ nohz_full
	idx      map[int]int  // node id -> column of the distance rows
	nodeOf   map[int]int  // cpu -> node id
}

// TopoOf reads the topology out of s.
func TopoOf(s guestinfo.State) Topo {
	t := Topo{Nodes: s.Nodes, Online: cpumask.New(s.Online...), idx: map[int]int{}, nodeOf: map[int]int{}}
	for i, n := range s.Nodes {
		t.idx[n.ID] = i
		for _, c := range n.CPUs {
			t.nodeOf[c] = n.ID
		}
	}
	t.Isolated = parseOptionalList(s.Isolated).Or(parseOptionalList(s.NohzFull))
	return t
}

// parseOptionalList parses a sysfs CPU list that may be empty or
// "(null)" (a 6.1 kernel's nohz_full without nohz_full=).
func parseOptionalList(s string) cpumask.Mask {
	s = strings.TrimSpace(s)
	if s == "" || s == "(null)" {
		return cpumask.Mask{}
	}
	m, err := cpumask.ParseList(s)
	if err != nil {
		return cpumask.Mask{}
	}
	return m
}

// NodeOf returns cpu's node, or -1.
func (t Topo) NodeOf(cpu int) int {
	if n, ok := t.nodeOf[cpu]; ok {
		return n
	}
	return -1
}

// Dist is the distance from node a to node b (row a of the table), or
// -1 when either is unknown.
func (t Topo) Dist(a, b int) int {
	i, ok1 := t.idx[a]
	j, ok2 := t.idx[b]
	if !ok1 || !ok2 || j >= len(t.Nodes[i].Distance) {
		return -1
	}
	return t.Nodes[i].Distance[j]
}

// CPUDist is the distance from node to cpu's node.
func (t Topo) CPUDist(node, cpu int) int { return t.Dist(node, t.NodeOf(cpu)) }

// Spread is node's spread order over allowed: CPUs sorted by distance
// from node, then by id, as cpumask_local_spread() walks the hop masks
// (for node -1, id order). Guest.Spread in test/e2e is the same rule.
func (t Topo) Spread(node int, allowed cpumask.Mask) []int {
	out := allowed.CPUs()
	if node < 0 {
		return out
	}
	sort.SliceStable(out, func(a, b int) bool {
		da, db := t.CPUDist(node, out[a]), t.CPUDist(node, out[b])
		if da != db {
			return da < db
		}
		return out[a] < out[b]
	})
	return out
}
