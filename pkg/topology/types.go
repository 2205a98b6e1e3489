package topology

import "github.com/numairqd/numairqd/pkg/cpumask"

// NoNode is NUMA_NO_NODE: a device that reports numa_node -1.
const NoNode = -1

// Snapshot is the CPU and NUMA layout at one moment; it is immutable.
type Snapshot struct {
	online, possible   cpumask.Mask
	isolated, nohzFull cpumask.Mask

	nodes     []Node      // online nodes, ascending id
	nodeIndex map[int]int // node id -> index into nodes and distance rows
	implicit  bool        // no node directory: one node 0 holds every CPU

	cpus map[int]CPU // online CPUs

	levels []int            // sorted unique distances among CPU-bearing nodes
	hops   [][]cpumask.Mask // per node index: hop masks; nil for a CPU-less node
	order  [][]int          // per node index: Spread over all online CPUs
}

// Node is an online NUMA node.
type Node struct {
	ID   int
	CPUs cpumask.Mask // online CPUs; empty for a memory-only node
	// Distance is nodeN/distance: entry k is to the k-th online node.
	Distance []int
}

// CPU is what sysfs tells about one online CPU.
type CPU struct {
	ID       int
	Node     int
	Package  int          // physical_package_id, -1 when unknown
	Siblings cpumask.Mask // SMT threads of its core, itself included
	Core     int          // lowest CPU id among Siblings, unique
	LLC      cpumask.Mask // CPUs sharing its last-level cache; may be empty
}

// newCPU is what is known of cpu on node before its topology files are read.
func newCPU(cpu, node int) CPU {
	return CPU{ID: cpu, Node: node, Package: -1, Siblings: cpumask.New(cpu), Core: cpu}
}

// Online are the online CPUs.
func (s *Snapshot) Online() cpumask.Mask { return s.online }

// Possible are the CPUs the kernel could ever bring online (ReadDetail).
func (s *Snapshot) Possible() cpumask.Mask { return s.possible }

// Isolated are the CPUs isolated from the scheduler (isolcpus=).
func (s *Snapshot) Isolated() cpumask.Mask { return s.isolated }

// NohzFull are the adaptive-tick CPUs (nohz_full=).
func (s *Snapshot) NohzFull() cpumask.Mask { return s.nohzFull }

// Nodes returns the online nodes in id order, in a shared slice.
func (s *Snapshot) Nodes() []Node { return s.nodes }

// ImplicitNode reports that sysfs had no node directory: node 0 is made up.
func (s *Snapshot) ImplicitNode() bool { return s.implicit }

// CPU returns what is known of an online CPU.
func (s *Snapshot) CPU(id int) (CPU, bool) {
	c, ok := s.cpus[id]
	return c, ok
}

// NodeOfCPU returns the node of an online CPU, or NoNode.
func (s *Snapshot) NodeOfCPU(cpu int) int {
	if c, ok := s.cpus[cpu]; ok {
		return c.Node
	}
	return NoNode
}

// Siblings returns the SMT siblings of cpu, itself included.
func (s *Snapshot) Siblings(cpu int) cpumask.Mask {
	if c, ok := s.cpus[cpu]; ok {
		return c.Siblings
	}
	return cpumask.New(cpu)
}

// Distance returns node_distance(from, to), -1 for a node not online.
func (s *Snapshot) Distance(from, to int) int {
	i, ok1 := s.nodeIndex[from]
	j, ok2 := s.nodeIndex[to]
	if !ok1 || !ok2 {
		return -1
	}
	return s.nodes[i].Distance[j]
}
