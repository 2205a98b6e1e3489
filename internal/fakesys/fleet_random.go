package fakesys

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// randomNICDrivers are the NIC drivers a random host picks from.
var randomNICDrivers = []string{"mlx5_core", "ice", "i40e", "bnxt_en", "ixgbe", "hns3", "ena", "mana", "virtio_net"}

// randomHost draws a plausible host from r: 1-8 nodes, sometimes
// CPU-less or with sparse ids, 0-32 CPUs a node, SMT 1, 2 or 4 numbered
// the x86 or the POWER way, packages of consecutive nodes, an LLC per
// node or per group of cores, symmetric distances (tiered by package or
// random from 11 to 40), 1-6 devices and sometimes a few banned CPUs. Every
// CPU is online and an SMT sibling group never leaves its node, package
// or LLC.
func randomHost(r *rand.Rand) host {
	nn := 1 + r.IntN(8)
	smt := []int{1, 2, 4}[r.IntN(3)]
	power := r.IntN(2) == 0
	cores := make([]int, nn) // by node index
	total := 0
	for n := range cores {
		if nn > 1 && r.IntN(5) == 0 {
			continue // a CPU-less node
		}
		cores[n] = r.IntN(32/smt + 1)
		total += cores[n]
	}
	if total == 0 {
		cores[0], total = 1, 1
	}
	ids := seq(nn)
	if r.IntN(4) == 0 {
		ids = r.Perm(64)[:nn] // sparse ids, as POWER and CXL hosts have
		slices.Sort(ids)
	}
	perPkg := 1 + r.IntN(nn) // nodes a package
	llcCores := r.IntN(5)    // 0: an LLC per node
	h := host{chip: "PCI-MSIX-", cpus: make([]hostCPU, total*smt)}
	core := 0
	for n, k := range cores {
		for i := range k {
			llc := 1000 * n
			if llcCores > 0 {
				llc += i / llcCores
			}
			for t := range smt {
				c := t*total + core
				if power {
					c = core*smt + t
				}
				h.cpus[c] = hostCPU{node: ids[n], pkg: n / perPkg, core: core, llc: llc}
			}
			core++
		}
	}
	var dist [][]int
	if r.IntN(2) == 0 {
		near := 11 + r.IntN(10)
		dist = TieredDistances(nn, near+1+r.IntN(20), Tier{Size: perPkg, Distance: near})
	} else {
		dist = distFunc(ids, func(i, j int) int { return 10 })
		for i := range nn {
			for j := range i {
				d := 11 + r.IntN(30)
				dist[i][j], dist[j][i] = d, d
			}
		}
	}
	h.nodes = nodesOf(ids, dist)
	nvmes, virtios := 0, 0
	for i := range 1 + r.IntN(6) {
		node := ids[r.IntN(nn)]
		if r.IntN(10) == 0 {
			node = -1
		}
		bdf := fmt.Sprintf("0000:%02x:00.0", i+1)
		if r.IntN(5) == 0 {
			h.devs = append(h.devs, nvme(nvmes, bdf, node, min(len(h.cpus), 1+r.IntN(64))))
			nvmes++
			continue
		}
		d := nic(randomNICDrivers[r.IntN(len(randomNICDrivers))], bdf, node, fmt.Sprintf("eth%d", i), 1+r.IntN(64))
		if d.driver == "virtio_net" {
			d.index = virtios
			virtios++
		}
		h.devs = append(h.devs, d)
	}
	if len(h.cpus) > 1 && r.IntN(3) == 0 {
		var b cpumask.Builder // a few CPUs, never all of them
		for range 1 + r.IntN(min(3, len(h.cpus)-1)) {
			b.Set(r.IntN(len(h.cpus)))
		}
		h.banned = b.Mask().String()
	}
	numbering := "x86"
	if power {
		numbering = "power"
	}
	h.name = fmt.Sprintf("random-%dn-%dcpu-smt%d-%s", nn, len(h.cpus), smt, numbering)
	h.what = fmt.Sprintf("a random host: %d nodes, %d CPUs, SMT%d numbered the %s way, %d devices", nn, len(h.cpus), smt, numbering, len(h.devs))
	return h
}
