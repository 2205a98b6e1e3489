package policy

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/topology"
)

// Plan is where every IRQ should be, computed from one topology snapshot,
// one inventory, one config and the refusals known so far. It is never
// modified after Compute.
type Plan struct {
	// Allowed are the CPUs IRQs may be placed on: online minus banned,
	// isolated and nohz_full CPUs as the config says.
	Allowed cpumask.Mask
	// Devices are the PCI devices with IRQs, by PCI address, then one
	// entry per non-PCI IRQ that a rule named.
	Devices []Device
	// Balance is load balancing's view: loads per CPU, the objective and
	// any better placement; nil when no device balances by load and no
	// loads were given.
	Balance *BalanceView
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
	// Order is the allowed CPUs in the order this device uses them. When
	// the kernel refuses a CPU (vector space full) apply moves on along it.
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
	// found no allowed CPU for it (every CPU offline, banned or
	// isolated, or none of a pinned rule's CPUs allowed): an IRQ the
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

// Refusal is an IRQ the kernel refused to move in an earlier round
// (EIO or EPERM): managed, or otherwise unsteerable, although nothing
// read from procfs said so. It holds while the IRQ keeps its name: the
// same number requested again under another name is a new IRQ.
type Refusal struct {
	Name  string
	Errno string // "EIO" or "EPERM"
}

// Refusals are the refused IRQs by number; nil means none.
type Refusals map[int]Refusal

// Compute plans every IRQ. It is pure: it reads only its arguments, so
// the same inputs always give the same plan. IRQs in refused are
// planned as managed, like the ones the inventory found managed. bal
// gives the loads and the held placement for devices balanced by load.
func Compute(s *topology.Snapshot, inv *inventory.Inventory, cfg *config.Config, refused Refusals, bal Balancing) *Plan {
	p := &Plan{Allowed: AllowedCPUs(s, cfg)}
	pl := newPlanner(s, p.Allowed, refused, bal)

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
	return p
}

// AllowedCPUs is online - banned_cpus - isolated - nohz_full, the last
// two as the config switches them.
func AllowedCPUs(s *topology.Snapshot, cfg *config.Config) cpumask.Mask {
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

// planner holds what one Compute call shares between devices: how many
// queues each CPU has been given so far, and the queues balanced by
// load.
type planner struct {
	s       *topology.Snapshot
	allowed cpumask.Mask
	refused Refusals
	load    loads

	bal   Balancing
	units []unit
	devs  []balanceDev
	reset int
}

func newPlanner(s *topology.Snapshot, allowed cpumask.Mask, refused Refusals, bal Balancing) *planner {
	return &planner{s: s, allowed: allowed, refused: refused, load: newLoads(allowed), bal: bal}
}

// managed reports whether the kernel owns q, and why: the inventory
// found it so, or an earlier write to it under this name was refused.
func (pl *planner) managed(q inventory.IRQ) (bool, string) {
	if q.Managed {
		return true, q.ManagedReason
	}
	if r, ok := pl.refused[q.Number]; ok && r.Name == q.Name {
		return true, "write failed with " + r.Errno
	}
	return false, ""
}

// device plans device number dev's IRQs, classified as classes says,
// under its rule (nil: defaults).
func (pl *planner) device(dev int, d Device, cfg *config.Config, rule *config.Rule, irqs []inventory.IRQ, classes []class) Device {
	d.Policy, d.Mask, d.Balance = config.PolicyAuto, config.MaskCPU, config.BalanceCount
	if rule != nil {
		d.Policy, d.Mask = rule.Policy, rule.Mask
		d.Rule = ruleName(rule)
		if rule.Node != nil {
			d.Node = *rule.Node
		}
	}
	d.SpreadNode = pl.s.SpreadNode(d.Node)

	d.IRQs = make([]IRQ, len(irqs))
	for i, q := range irqs {
		d.IRQs[i] = IRQ{Number: q.Number, Name: q.Name, Role: classes[i].role, Queue: classes[i].queue,
			Current: q.Affinity, CPU: -1, Hop: -1, Distance: -1}
		if managed, why := pl.managed(q); managed {
			d.IRQs[i].Managed, d.IRQs[i].Reason = true, "managed by the kernel: "+why
		} else if q.Unreadable != "" {
			d.IRQs[i].Unreadable, d.IRQs[i].Reason = true, "left alone, files unreadable: "+q.Unreadable
		}
	}
	queues := queueIndices(d.IRQs)
	if d.Policy == config.PolicyAuto {
		d.Policy = config.PolicyNUMAHop
		if len(queues) > 0 && len(queues) >= pl.allowed.Weight() {
			d.Policy = config.PolicyLinear
		}
	}

	switch d.Policy {
	case config.PolicyIgnore:
		pl.leaveAll(&d, false, "ignore: "+orDefault(d.Rule))
		return d
	case config.PolicyPinned:
		pl.pinned(&d, rule.CPUs)
		return d
	case config.PolicyLinear:
		d.Order = pl.allowed.CPUs()
	default:
		d.Order = pl.s.Spread(d.Node, pl.allowed)
	}
	if len(d.Order) == 0 {
		pl.leaveAll(&d, true, "no allowed CPU: every CPU is offline, banned or isolated")
		return d
	}

	chosen := map[int]cpumask.Mask{} // queue index -> mask
	switch {
	case d.Policy == config.PolicyLinear:
		for i, qi := range queues {
			cpu := d.Order[i%len(d.Order)]
			chosen[qi] = pl.maskFor(cpu, d.Mask)
			pl.load.add(cpu)
		}
	case d.Mask == config.MaskCore:
		slots := coreSlots(pl.s, pl.s.Rings(d.Node, pl.allowed))
		for i, qi := range queues {
			core := slots[i%len(slots)]
			chosen[qi] = core
			pl.load.add(core.First())
		}
	default:
		cur := pl.load.cursor(d.Order)
		for _, qi := range queues {
			cpu := cur.next()
			chosen[qi] = cpumask.New(cpu)
			pl.load.add(cpu)
		}
	}
	// Where the device balances by load: count's CPUs (counted), then
	// the held ones.
	var counted map[int]int
	if loadBalanced(&d, rule, cfg) && len(queues) > 0 {
		d.Balance = config.BalanceLoad
		counted = make(map[int]int, len(chosen))
		for qi, m := range chosen {
			counted[qi] = m.First()
		}
		rings := [][]int{d.Order}
		if d.Policy == config.PolicyNUMAHop {
			rings = pl.s.Rings(d.Node, pl.allowed)
		}
		cpus := maps.Clone(counted)
		pl.balanceDevice(dev, &d, queues, cpus, rings)
		for qi, cpu := range cpus {
			chosen[qi] = cpumask.New(cpu)
		}
	}

	control := pl.controlMask(d.Node)
	for i := range d.IRQs {
		q := &d.IRQs[i]
		if q.handsOff() {
			continue
		}
		if q.Role == RoleQueue {
			q.Planned = chosen[q.Queue]
			q.CPU = q.Planned.First()
			q.Hop, q.Distance = pl.s.HopLevel(d.Node, q.CPU), pl.distance(d.Node, q.CPU)
			where := "device has no NUMA node"
			if d.SpreadNode != topology.NoNode {
				where = fmt.Sprintf("hop %d, distance %d from node %d", q.Hop, q.Distance, d.Node)
			}
			how := string(d.Policy)
			if d.Balance == config.BalanceLoad {
				how += ", balance load"
				if c := counted[q.Queue]; c != q.CPU {
					where = fmt.Sprintf("count's CPU %d, ", c) + where
				}
			}
			q.Reason = fmt.Sprintf("%s: queue %d -> %s, %s", how, q.Queue, maskWord(q.Planned, d.Mask), where)
			continue
		}
		q.Planned = control
		q.Reason = "control IRQ: all allowed CPUs (device has no NUMA node)"
		if d.SpreadNode != topology.NoNode {
			q.Reason = fmt.Sprintf("control IRQ: allowed CPUs of the hop nearest node %d", d.Node)
		}
	}
	return d
}

// pinned writes the rule's CPUs (the allowed ones) to every IRQ.
func (pl *planner) pinned(d *Device, cpus cpumask.Mask) {
	m := cpus.And(pl.allowed)
	if m.IsEmpty() {
		pl.leaveAll(d, true, fmt.Sprintf("pinned: none of CPUs %s is allowed", cpus))
		return
	}
	d.Order = m.CPUs()
	for i := range d.IRQs {
		if q := &d.IRQs[i]; !q.handsOff() {
			q.Planned = m
			q.Reason = fmt.Sprintf("pinned to %s by %s", m, orDefault(d.Rule))
		}
	}
}

// leaveAll leaves the device's IRQs alone for why; noCPU says it is for
// want of an allowed CPU.
func (pl *planner) leaveAll(d *Device, noCPU bool, why string) {
	for i := range d.IRQs {
		if q := &d.IRQs[i]; !q.handsOff() {
			q.Reason, q.NoCPU = why, noCPU
		}
	}
}

// controlMask is where a device's control IRQs go: the allowed CPUs of
// the nearest hop that has any (the device's own node unless all its
// CPUs are banned); every allowed CPU for NoNode.
func (pl *planner) controlMask(node int) cpumask.Mask {
	for _, ring := range pl.s.Rings(node, pl.allowed) {
		if len(ring) > 0 {
			return cpumask.New(ring...)
		}
	}
	return pl.allowed
}

func (pl *planner) maskFor(cpu int, mode config.MaskMode) cpumask.Mask {
	if mode == config.MaskCore {
		return pl.s.Siblings(cpu).And(pl.allowed)
	}
	return cpumask.New(cpu)
}

func (pl *planner) distance(node, cpu int) int {
	if node == topology.NoNode {
		return -1
	}
	return pl.s.Distance(node, pl.s.NodeOfCPU(cpu))
}

// coreSlots is the MANA driver's NUMA-aware walk
// (mana_irq_setup_numa_aware): hop by hop, pass after pass over the
// hop's cores in order of their first CPU, one IRQ per core per pass,
// until the hop's thread count is used up; each slot is the core's
// allowed siblings.
func coreSlots(s *topology.Snapshot, rings [][]int) []cpumask.Mask {
	var slots []cpumask.Mask
	for _, ring := range rings {
		inRing := cpumask.New(ring...)
		var cores []cpumask.Mask
		seen := map[int]bool{}
		for _, c := range ring {
			sib := s.Siblings(c).And(inRing)
			if !seen[sib.First()] {
				seen[sib.First()] = true
				cores = append(cores, sib)
			}
		}
		for weight := len(ring); weight > 0; {
			for _, core := range cores {
				if weight == 0 {
					break
				}
				slots = append(slots, core)
				weight--
			}
		}
	}
	return slots
}

// queueIndices returns the distinct queue indices of the device's
// movable queue IRQs, ascending; IRQs sharing an index (rx and tx of one
// pair) share a CPU.
func queueIndices(irqs []IRQ) []int {
	var qs []int
	for _, q := range irqs {
		if q.Role == RoleQueue && !q.handsOff() {
			qs = append(qs, q.Queue)
		}
	}
	slices.Sort(qs)
	return slices.Compact(qs)
}

func ruleName(r *config.Rule) string {
	if r.Name != "" {
		return fmt.Sprintf("rule %q (line %d)", r.Name, r.Line)
	}
	return fmt.Sprintf("rule at line %d", r.Line)
}

func orDefault(rule string) string {
	return cmp.Or(rule, "default")
}

func maskWord(m cpumask.Mask, mode config.MaskMode) string {
	if mode == config.MaskCore {
		return "core " + m.String()
	}
	return "CPU " + m.String()
}

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
	return strings.Join([]string{
		fmt.Sprintf("%d devices", len(p.Devices)),
		fmt.Sprintf("%d IRQs placed", placed),
		fmt.Sprintf("%d managed", managed),
		fmt.Sprintf("%d left alone", alone),
	}, ", ")
}
