package topology

import (
	"slices"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// buildHops computes the hop levels and masks as sched_init_numa()
// does, over the nodes with CPUs: mask h of node j holds the CPUs of
// nodes at most levels[h] away.
func (s *Snapshot) buildHops() {
	var cpuNodes []int // indices into s.nodes
	for i, n := range s.nodes {
		if !n.CPUs.IsEmpty() {
			cpuNodes = append(cpuNodes, i)
		}
	}
	for _, i := range cpuNodes {
		for _, j := range cpuNodes {
			s.levels = append(s.levels, s.nodes[i].Distance[j])
		}
	}
	slices.Sort(s.levels)
	s.levels = slices.Compact(s.levels)

	s.hops = make([][]cpumask.Mask, len(s.nodes))
	s.order = make([][]int, len(s.nodes))
	for _, j := range cpuNodes {
		s.hops[j] = make([]cpumask.Mask, len(s.levels))
		for h, level := range s.levels {
			var b cpumask.Builder
			for _, k := range cpuNodes {
				if s.nodes[j].Distance[k] <= level {
					b.Or(s.nodes[k].CPUs)
				}
			}
			s.hops[j][h] = b.Mask()
		}
		s.order[j] = slices.Concat(s.rings(j, s.online)...)
	}
}

// rings walks node index j's hop masks as for_each_numa_hop_mask():
// ring h holds the allowed CPUs hop h adds, ascending.
func (s *Snapshot) rings(j int, allowed cpumask.Mask) [][]int {
	out := make([][]int, len(s.hops[j]))
	prev := cpumask.Mask{}
	for h, mask := range s.hops[j] {
		out[h] = mask.And(allowed).AndNot(prev).CPUs()
		prev = mask
	}
	return out
}

// Levels returns the hop distances (sched_domains_numa_distance).
func (s *Snapshot) Levels() []int { return slices.Clone(s.levels) }

// SpreadNode returns the node whose hop masks a device on node uses:
// node if it has CPUs, else the nearest that has (numa_nearest_node);
// NoNode for a node not online.
func (s *Snapshot) SpreadNode(node int) int {
	i, ok := s.nodeIndex[node]
	if !ok {
		return NoNode
	}
	if s.hops[i] != nil {
		return node
	}
	best, bestDist := NoNode, 0
	for k, n := range s.nodes {
		if d := s.nodes[i].Distance[k]; s.hops[k] != nil && (best == NoNode || d < bestDist) {
			best, bestDist = n.ID, d
		}
	}
	return best
}

// Spread returns the allowed online CPUs in cpumask_local_spread order
// for node: by hop from SpreadNode(node), then id.
func (s *Snapshot) Spread(node int, allowed cpumask.Mask) []int {
	n := s.SpreadNode(node)
	if n == NoNode {
		return allowed.And(s.online).CPUs()
	}
	return slices.DeleteFunc(slices.Clone(s.order[s.nodeIndex[n]]), func(c int) bool { return !allowed.Contains(c) })
}

// Rings returns Spread split by hop; NoNode gives one ring.
func (s *Snapshot) Rings(node int, allowed cpumask.Mask) [][]int {
	n := s.SpreadNode(node)
	if n == NoNode {
		return [][]int{allowed.And(s.online).CPUs()}
	}
	return s.rings(s.nodeIndex[n], allowed)
}

// HopLevel returns the hop at which cpu joins node's masks: 0 for its
// own CPUs and NoNode, -1 offline.
func (s *Snapshot) HopLevel(node, cpu int) int {
	masks := []cpumask.Mask{s.online}
	if n := s.SpreadNode(node); n != NoNode {
		masks = s.hops[s.nodeIndex[n]]
	}
	for h, mask := range masks {
		if mask.Contains(cpu) {
			return h
		}
	}
	return -1
}
