package policy

import (
	"cmp"
	"fmt"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/topology"
)

// Sources of an Exclusion besides the ToolBan sources.
const (
	ExcludedBanned   = "banned_cpus"
	ExcludedIsolated = "isolated"
	ExcludedNohzFull = "nohz_full"
)

// ToolBan is a set of CPUs another tool banned, an input of Compute,
// and the IRQs it leaves alone: by number and by module (driver name),
// each with the setting that bans it (irqbalance's --banirq, --banmod).
type ToolBan struct {
	Source, Path string // BanEnvFile with the file read, BanDefaultAffinity or BanIsolatedPartitions
	CPUs         cpumask.Mask
	IRQs         map[int]string
	Modules      map[string]string
}

// Sources of a ToolBan: numairqd_banned_cpus's and /status's source.
const (
	BanEnvFile         = "irqbalance_env"       // irqbalance's environment file: cri-o, tuned
	BanDefaultAffinity = "default_smp_affinity" // cri-o clears pods' CPUs from it
	// BanIsolatedPartitions are the CPUs of isolated cgroup partitions.
	BanIsolatedPartitions = "isolated_partitions"
)

// Exclusion is the online CPUs one source leaves out of Allowed, and why.
type Exclusion struct {
	Source string       `json:"source"` // ExcludedBanned, ExcludedIsolated, ExcludedNohzFull or a ToolBan's Source
	CPUs   cpumask.Mask `json:"cpus"`
	Why    string       `json:"why"`
}

// Taken is the CPUs the drivers' spread gives a numa-hop device's
// queues that another device's queues hold in the plan.
type Taken struct {
	Device string       `json:"device"` // Device.Label of the earlier device
	CPUs   cpumask.Mask `json:"cpus"`
}

// Label names d for people: its PCI address, or its first IRQ.
func (d Device) Label() string {
	if d.PCI != "" || len(d.IRQs) == 0 {
		return d.PCI
	}
	return fmt.Sprintf("IRQ %d (%s)", d.IRQs[0].Number, d.IRQs[0].Name)
}

// exclusions returns the allowed CPUs and, by source, those cfg and
// tools leave out.
func exclusions(s *topology.Snapshot, cfg *config.Config, tools []ToolBan) (allowed cpumask.Mask, out []Exclusion) {
	online := s.Online()
	add := func(source string, cpus cpumask.Mask, why string) {
		if cpus = cpus.And(online); !cpus.IsEmpty() {
			out = append(out, Exclusion{Source: source, CPUs: cpus, Why: why})
		}
	}
	add(ExcludedBanned, cfg.BannedCPUs, "banned by the config's banned_cpus")
	for _, b := range tools {
		switch b.Source {
		case BanEnvFile:
			add(b.Source, b.CPUs, fmt.Sprintf("banned by IRQBALANCE_BANNED_CPUS or IRQBALANCE_BANNED_CPULIST in %s (cri-o and tuned write them; irqbalance_env_file)", b.Path))
		case BanDefaultAffinity:
			add(b.Source, b.CPUs, "left out of /proc/irq/default_smp_affinity (cri-o clears the CPUs of pods with irq-load-balancing disabled; honor_default_smp_affinity)")
		case BanIsolatedPartitions:
			add(b.Source, b.CPUs, "in an isolated partition (the cgroup v2 root's cpuset.cpus.isolated; cri-o makes one for a pod with cpu-load-balancing disabled; isolated_partitions)")
		default: // still banned, so that Allowed stays what it bans
			add(b.Source, b.CPUs, "banned by "+b.Source)
		}
	}
	if cfg.ExcludeIsolated {
		add(ExcludedIsolated, s.Isolated(), "isolated from the scheduler (isolcpus=; exclude_isolated)")
	}
	if cfg.ExcludeNohzFull {
		add(ExcludedNohzFull, s.NohzFull(), "nohz_full: kept free of the tick (exclude_nohz_full)")
	}
	allowed = online
	for _, e := range out {
		allowed = allowed.AndNot(e.CPUs)
	}
	return allowed, out
}

// policyWhy says why d has its policy: a rule's, or what auto weighed.
func policyWhy(d *Device, auto bool, queues int, allowed cpumask.Mask) string {
	by := cmp.Or(d.Rule, "the default")
	if !auto {
		return fmt.Sprintf("%s, set by %s", d.Policy, by)
	}
	n := allowed.Weight()
	switch {
	case d.Policy == config.PolicyLinear:
		return fmt.Sprintf("auto (%s) chose linear: %s >= %s, so queue i takes the i-th allowed CPU, wrapping, and every CPU serves the device", by, plural(queues, "queue"), plural(n, "allowed CPU"))
	case queues == 0:
		kept, what := 0, "managed by the kernel or unreadable"
		for _, q := range d.IRQs {
			if q.Role == RoleQueue && q.handsOff() {
				kept++
			}
			if q.Role == RoleQueue && q.apart {
				what = "managed by the kernel, unreadable, or set apart by a ban or a rule by IRQ number"
			}
		}
		switch {
		case kept == 1:
			return fmt.Sprintf("auto (%s) chose numa-hop: no queue IRQ to place (the queue IRQ is %s), only control IRQs", by, what)
		case kept > 1:
			return fmt.Sprintf("auto (%s) chose numa-hop: no queue IRQ to place (the %d queue IRQs are %s), only control IRQs", by, kept, what)
		}
		return fmt.Sprintf("auto (%s) chose numa-hop: no queue IRQ found, only control IRQs", by)
	case d.SpreadNode == topology.NoNode:
		return fmt.Sprintf("auto (%s) chose numa-hop: %s < %s; the device has no NUMA node, so the queues go over the allowed CPUs by id", by, plural(queues, "queue"), plural(n, "allowed CPU"))
	}
	node := fmt.Sprintf("node %d's", d.SpreadNode)
	if d.SpreadNode != d.Node {
		node = fmt.Sprintf("node %d's (the nearest with CPUs to node %d)", d.SpreadNode, d.Node)
	}
	return fmt.Sprintf("auto (%s) chose numa-hop: %s < %s, so the queues go to %s CPUs first, then hop by hop to farther nodes", by, plural(queues, "queue"), plural(n, "allowed CPU"), node)
}

// orNone is m, or "none" when it is empty.
func orNone(m cpumask.Mask) string {
	if m.IsEmpty() {
		return "none"
	}
	return m.String()
}

// Stacking is the most queue IRQs on one CPU, core and LLC (0: unknown).
type Stacking struct {
	CPU  int `json:"cpu"`
	Core int `json:"core"`
	LLC  int `json:"llc"`
}

// Locality is the node distance of a device's queue IRQs, as planned and
// in the drivers' own spread. Farther counts those planned farther than
// the drivers' and outside its package, InPackage those inside it.
type Locality struct {
	Mean         float64 `json:"mean"`
	Worst        int     `json:"worst"`
	DriversMean  float64 `json:"drivers_mean"`
	DriversWorst int     `json:"drivers_worst"`
	Farther      int     `json:"farther"`
	InPackage    int     `json:"in_package"`
}

// compare fills in p's Stacking, DriversStacking and Localities.
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
