package policy

import (
	"fmt"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/topology"
)

// Sources of an Exclusion besides BanEnvFile and BanDefaultAffinity.
const (
	ExcludedBanned   = "banned_cpus"
	ExcludedIsolated = "isolated"
	ExcludedNohzFull = "nohz_full"
)

// ToolBan is a set of CPUs another tool banned, an input of Compute
// read from the machine (machine.Machine.ToolBans).
type ToolBan struct {
	// Source is BanEnvFile or BanDefaultAffinity; Path is the
	// environment file read, "" for BanDefaultAffinity.
	Source, Path string
	CPUs         cpumask.Mask
}

// Sources of a ToolBan, named as the source label of
// numairqd_banned_cpus and /status name them.
const (
	// BanEnvFile is irqbalance's environment file (irqbalance_env_file),
	// whose banned-CPU variables cri-o and tuned write.
	BanEnvFile = "irqbalance_env"
	// BanDefaultAffinity is /proc/irq/default_smp_affinity
	// (honor_default_smp_affinity), from which cri-o clears the CPUs
	// of pods that ask for no IRQs.
	BanDefaultAffinity = "default_smp_affinity"
)

// Exclusion is a set of online CPUs left out of Plan.Allowed by one
// source, and why: an operator who finds a CPU without IRQs learns
// which file or setting to look at. A CPU left out by several sources
// is in each of their Exclusions.
type Exclusion struct {
	Source string       `json:"source"` // ExcludedBanned, ExcludedIsolated, ExcludedNohzFull or a ToolBan's Source
	CPUs   cpumask.Mask `json:"cpus"`
	Why    string       `json:"why"`
}

// Taken is the CPUs that the drivers' own spread gives queues of a
// numa-hop device which the plan put elsewhere, and that another
// device's queues hold in the same plan: why it is not placed exactly
// as its driver would place it alone.
type Taken struct {
	Device string       `json:"device"` // Device.Label of the earlier device
	CPUs   cpumask.Mask `json:"cpus"`
}

// Label names d for people: its PCI address, or its first IRQ for a
// device a rule named by IRQ name.
func (d Device) Label() string {
	if d.PCI != "" || len(d.IRQs) == 0 {
		return d.PCI
	}
	return fmt.Sprintf("IRQ %d (%s)", d.IRQs[0].Number, d.IRQs[0].Name)
}

// exclusions lists, by source, the online CPUs cfg and tools leave out
// of the allowed set; allowed is online minus all of them.
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

// policyWhy says why d has the policy it has: a rule's word, or what
// auto weighed; queues are its movable queues, allowed the CPUs.
func policyWhy(d *Device, auto bool, queues int, allowed cpumask.Mask) string {
	by := "the default"
	if d.Rule != "" {
		by = d.Rule
	}
	if !auto {
		return fmt.Sprintf("%s, set by %s", d.Policy, by)
	}
	n := allowed.Weight()
	switch {
	case d.Policy == config.PolicyLinear:
		return fmt.Sprintf("auto (%s) chose linear: %d queues >= %d allowed CPUs, so queue i takes the i-th allowed CPU, wrapping, and every CPU serves the device", by, queues, n)
	case queues == 0:
		kept := 0
		for _, q := range d.IRQs {
			if q.Role == RoleQueue && q.handsOff() {
				kept++
			}
		}
		if kept > 0 {
			return fmt.Sprintf("auto (%s) chose numa-hop: no queue IRQ to place (the %d queue IRQs are managed by the kernel or unreadable), only control IRQs", by, kept)
		}
		return fmt.Sprintf("auto (%s) chose numa-hop: no queue IRQ found, only control IRQs", by)
	case d.SpreadNode == topology.NoNode:
		return fmt.Sprintf("auto (%s) chose numa-hop: %d queues < %d allowed CPUs; the device has no NUMA node, so the queues go over the allowed CPUs by id", by, queues, n)
	}
	node := fmt.Sprintf("node %d's", d.SpreadNode)
	if d.SpreadNode != d.Node {
		node = fmt.Sprintf("node %d's (the nearest with CPUs to node %d)", d.SpreadNode, d.Node)
	}
	return fmt.Sprintf("auto (%s) chose numa-hop: %d queues < %d allowed CPUs, so the queues go to %s CPUs first, then hop by hop to farther nodes", by, queues, n, node)
}

// orNone is m, or "none" when it is empty.
func orNone(m cpumask.Mask) string {
	if m.IsEmpty() {
		return "none"
	}
	return m.String()
}
