package topology_test

import (
	"fmt"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/topology"
)

// bigMachine is 1024 CPUs (512 cores, SMT2) on 32 nodes in 4 sockets:
// distance 10 local, 12 in the socket, 32 across sockets.
func bigMachine() fakesys.Machine {
	const cpus, nodes, perNode = 1024, 32, 16 // 16 cores per node
	m := fakesys.Machine{
		Online:   fmt.Sprintf("0-%d", cpus-1),
		Siblings: func(c int) string { return fmt.Sprintf("%d,%d", c%512, c%512+512) },
		Package:  func(c int) int { return (c % 512) / 128 },
		LLC: func(c int) string {
			n := (c % 512) / perNode
			return fmt.Sprintf("%d-%d,%d-%d", n*perNode, n*perNode+perNode-1, 512+n*perNode, 512+n*perNode+perNode-1)
		},
	}
	dist := fakesys.TieredDistances(nodes, 32, fakesys.Tier{Size: 8, Distance: 12})
	for n := range nodes {
		m.Nodes = append(m.Nodes, fakesys.Node{ID: n, Distance: dist[n],
			CPUs: fmt.Sprintf("%d-%d,%d-%d", n*perNode, n*perNode+perNode-1, 512+n*perNode, 512+n*perNode+perNode-1)})
	}
	return m
}

// BenchmarkRebuild1024CPUs32Nodes is a full rebuild: read the sysfs tree
// and compute every node's spread order.
func BenchmarkRebuild1024CPUs32Nodes(b *testing.B) {
	tree := fakesys.New(b)
	tree.AddMachine(bigMachine())
	fs := topology.NewFS(tree.Sys())
	b.ReportAllocs()
	for b.Loop() {
		s, err := fs.Read()
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range cpuNodes(s) {
			if len(s.Spread(n, s.Online())) != 1024 {
				b.Fatal("short spread")
			}
		}
	}
}

// BenchmarkSpreadOneNode is one node's order over an allowed mask that
// is not every online CPU (so it cannot use the precomputed order as is).
func BenchmarkSpreadOneNode(b *testing.B) {
	s := readMachine(b, bigMachine())
	allowed := s.Online().AndNot(s.Siblings(0))
	b.ReportAllocs()
	for b.Loop() {
		if len(s.Spread(17, allowed)) != 1022 {
			b.Fatal("wrong spread")
		}
	}
}
