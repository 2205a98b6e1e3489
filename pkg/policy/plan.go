package policy

import (
	"fmt"
	"maps"
	"regexp"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/topology"
)

// Plan is where every IRQ should be, computed from one topology snapshot,
// one inventory, one config and the memory of earlier rounds. It is
// never modified after Compute.
type Plan struct {
	// Allowed are the CPUs IRQs may be placed on: online minus banned,
	// isolated and nohz_full CPUs as the config says.
	Allowed cpumask.Mask
	// Full are the online CPUs of Memory.Full: no IRQ is moved there.
	Full cpumask.Mask
	// Devices are the PCI devices with IRQs, by PCI address, then one
	// entry per non-PCI IRQ that a rule named.
	Devices []Device
	// Balance is load balancing's view: loads per CPU, the objective and
	// any better placement; nil when no device balances by load and no
	// loads were given.
	Balance *BalanceView

	held Held // see Held
}

// Device is the plan for one device's IRQs.
type Device struct {
	PCI        string
	Driver     string
	Interfaces []string
	// Node is the device's NUMA node (the rule's node when it gives one);
	// SpreadNode is the node whose hops are used: Node itself, the
	// nearest node with CPUs for a memory-only node, or NoNode.
	Node, SpreadNode int
	// Policy is what was applied: never PolicyAuto, which resolves to
	// numa-hop or linear.
	Policy config.Policy
	Mask   config.MaskMode
	// Balance is how the queues were shared out: BalanceLoad only when
	// the rule (or the config) asks for it and the policy spreads
	// single CPUs (numa-hop, linear with mask cpu).
	Balance config.Balance
	// Rule names the config rule that matched ("" for none).
	Rule string
	// Order is the allowed CPUs in the order this device uses them; an
	// IRQ planned on CPUs with no free vector (Plan.Full) moves on
	// along it.
	Order []int
	IRQs  []IRQ
}

// IRQ is the plan for one IRQ.
type IRQ struct {
	Number int
	Name   string
	Role   Role
	Queue  int // -1 when not a queue IRQ
	// Managed IRQs belong to the kernel: never planned.
	Managed bool
	// Current is smp_affinity_list as read; Planned is what it should be,
	// empty when the IRQ is left alone.
	Current, Planned cpumask.Mask
	// CPU is the CPU chosen for a queue IRQ, -1 otherwise.
	CPU int
	// Hop and Distance place CPU relative to the device's node: the hop
	// level and node distance; -1 when not a single-CPU placement.
	Hop, Distance int
	// Unreadable is set on an IRQ left alone because its own
	// /proc/irq/N files could not be read (Reason names the file).
	Unreadable bool
	// NoCPU is set on an IRQ left alone because its device's policy
	// found no allowed CPU for it (every CPU offline, banned, isolated
	// or full, or none of a pinned rule's CPUs allowed): an IRQ the
	// plan could not place, not one it chose to leave.
	NoCPU bool
	// Load is the IRQ's smoothed interrupt load in CPU-seconds per
	// second, 0 when the plan was made without loads.
	Load float64
	// Reason says why, for logs and `numairqd plan`.
	Reason string
}

// handsOff reports whether the planner must not place q: the kernel
// owns it, or its files could not be read.
func (q IRQ) handsOff() bool { return q.Managed || q.Unreadable }

// LeftAlone reports whether the plan does not touch the IRQ.
func (q IRQ) LeftAlone() bool { return q.Planned.IsEmpty() }

// Compute plans every IRQ. It is pure: it reads only its arguments, so
// the same inputs always give the same plan. IRQs in mem.Refused are
// planned as managed, like the ones the inventory found managed; no IRQ
// is moved onto a CPU of mem.Full. bal gives the loads for devices
// balanced by load, mem.Held their earlier placement.
func Compute(s *topology.Snapshot, inv *inventory.Inventory, cfg *config.Config, mem Memory, bal Balancing) *Plan {
	p := &Plan{Allowed: allowedCPUs(s, cfg), Full: mem.Full.And(s.Online())}
	pl := newPlanner(s, p, mem, bal)

	owned := map[int]bool{}
	for _, dev := range inv.Devices {
		irqs := inv.DeviceIRQs(dev.PCI)
		if len(irqs) == 0 {
			continue
		}
		for _, q := range irqs {
			owned[q.Number] = true
		}
		facts := config.DeviceFacts{PCI: dev.PCI, Drivers: dev.Drivers, Interfaces: dev.Interfaces, IRQNames: names(irqs)}
		rule, _ := cfg.RuleFor(facts)
		var re *regexp.Regexp
		if rule != nil {
			re = rule.QueueRegex
		}
		d := Device{PCI: dev.PCI, Driver: dev.Driver, Interfaces: dev.Interfaces, Node: dev.NUMANode}
		p.Devices = append(p.Devices, pl.device(len(p.Devices), d, cfg, rule, irqs, classify(irqs, re)))
	}
	// IRQs with no PCI device (timer, i8042, ACPI) are left alone unless
	// a rule names them.
	for _, q := range inv.IRQs {
		if owned[q.Number] {
			continue
		}
		rule, ok := cfg.RuleFor(config.DeviceFacts{IRQNames: []string{q.Name}})
		if !ok {
			continue
		}
		d := Device{Node: topology.NoNode}
		p.Devices = append(p.Devices, pl.device(len(p.Devices), d, cfg, rule, []inventory.IRQ{q}, []class{{RoleControl, -1}}))
	}
	p.Balance = pl.balance(p)
	p.held = pl.chose
	return p
}

// allowedCPUs is online - banned_cpus - isolated - nohz_full, the last
// two as the config switches them.
func allowedCPUs(s *topology.Snapshot, cfg *config.Config) cpumask.Mask {
	a := s.Online().AndNot(cfg.BannedCPUs)
	if cfg.ExcludeIsolated {
		a = a.AndNot(s.Isolated())
	}
	if cfg.ExcludeNohzFull {
		a = a.AndNot(s.NohzFull())
	}
	return a
}

func names(irqs []inventory.IRQ) []string {
	out := make([]string, len(irqs))
	for i, q := range irqs {
		out[i] = q.Name
	}
	return out
}

// Held returns the placement load balancing chose for the plan's
// load-balanced queues (before any move off a full CPU), for the next
// plan's Memory.Held.
func (p *Plan) Held() Held { return maps.Clone(p.held) }

// Unplaced returns the IRQs the plan could not place: for want of an
// allowed CPU (IRQ.NoCPU) or because their files were unreadable.
func (p *Plan) Unplaced() []IRQ {
	var out []IRQ
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			if q.NoCPU || q.Unreadable {
				out = append(out, q)
			}
		}
	}
	return out
}

// Summary counts the plan's IRQs by state, for logs and STATUS=.
func (p *Plan) Summary() string {
	var placed, managed, alone int
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			switch {
			case q.Managed:
				managed++
			case q.LeftAlone():
				alone++
			default:
				placed++
			}
		}
	}
	return fmt.Sprintf("%d devices, %d IRQs placed, %d managed, %d left alone", len(p.Devices), placed, managed, alone)
}
