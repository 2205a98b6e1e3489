package policy

import (
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/topology"
)

// Stacking is the most queue IRQs a placement puts on one CPU, on one
// core (SMT siblings) and on one last-level cache (0 when the kernel
// shows no caches).
type Stacking struct {
	CPU  int `json:"cpu"`
	Core int `json:"core"`
	LLC  int `json:"llc"`
}

// Locality is how far a device's queue IRQs are from its node, in node
// distance, as planned and in the drivers' own spread (the device
// alone, queue k on the k-th CPU of its order). Farther counts the
// queue IRQs planned farther than the drivers put them and outside the
// package of the drivers' CPU (the objective allows none); InPackage
// those farther but inside it, which the objective allows where it
// lowers the host's most queue IRQs per CPU.
type Locality struct {
	Mean         float64 `json:"mean"`
	Worst        int     `json:"worst"`
	DriversMean  float64 `json:"drivers_mean"`
	DriversWorst int     `json:"drivers_worst"`
	Farther      int     `json:"farther"`
	InPackage    int     `json:"in_package"`
}

// compare fills in p's Stacking and DriversStacking and each device's
// Locality from the placed queue IRQs (IRQ.CPU and DriversCPU).
func compare(s *topology.Snapshot, p *Plan) {
	n := s.Online().Last() + 1
	ours, drivers := make([]int, n), make([]int, n)
	for i := range p.Devices {
		d := &p.Devices[i]
		var l Locality
		placed := 0
		for _, q := range d.IRQs {
			if q.Role != RoleQueue || q.CPU < 0 || q.DriversCPU < 0 || q.CPU >= n || q.DriversCPU >= n {
				continue
			}
			ours[q.CPU]++
			drivers[q.DriversCPU]++
			if q.Distance < 0 || q.DriversDistance < 0 {
				continue
			}
			placed++
			l.Mean += float64(q.Distance)
			l.DriversMean += float64(q.DriversDistance)
			l.Worst, l.DriversWorst = max(l.Worst, q.Distance), max(l.DriversWorst, q.DriversDistance)
			if q.Distance > q.DriversDistance {
				c, _ := s.CPU(q.CPU)
				k, _ := s.CPU(q.DriversCPU)
				if k.Package >= 0 && c.Package == k.Package {
					l.InPackage++
				} else {
					l.Farther++
				}
			}
		}
		if placed > 0 && d.Policy == config.PolicyNUMAHop {
			l.Mean /= float64(placed)
			l.DriversMean /= float64(placed)
			d.Locality = &l
		}
	}
	p.Stacking, p.DriversStacking = stack(s, ours), stack(s, drivers)
}

// stack is the Stacking of perCPU, queue IRQs by CPU id.
func stack(s *topology.Snapshot, perCPU []int) Stacking {
	core, llc := make([]int, len(perCPU)), make([]int, len(perCPU))
	var st Stacking
	for cpu, n := range perCPU {
		c, ok := s.CPU(cpu)
		if n == 0 || !ok {
			continue
		}
		st.CPU = max(st.CPU, n)
		core[c.Core] += n
		st.Core = max(st.Core, core[c.Core])
		if !c.LLC.IsEmpty() {
			llc[c.LLC.First()] += n
			st.LLC = max(st.LLC, llc[c.LLC.First()])
		}
	}
	return st
}
