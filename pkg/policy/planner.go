package policy

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/topology"
)

// planner holds what one Compute call shares between devices: the
// memory it plans with, how many queues each CPU has been given so far,
// and the queues balanced by load.
type planner struct {
	s       *topology.Snapshot
	allowed cpumask.Mask
	full    cpumask.Mask
	refused Refusals
	counts  queueCounts

	bal   Balancing
	held  Held // Memory.Held
	chose Held // the plan's Held
	units []unit
	devs  []balanceDev
	reset int
}

func newPlanner(s *topology.Snapshot, p *Plan, mem Memory, bal Balancing) *planner {
	return &planner{s: s, allowed: p.Allowed, full: p.Full, refused: mem.Refused, counts: newQueueCounts(p.Allowed),
		bal: bal, held: mem.Held, chose: Held{}}
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
	queues := pl.resolve(&d, rule, irqs, classes)
	switch d.Policy {
	case config.PolicyIgnore:
		pl.leaveAll(&d, false, "ignore: "+cmp.Or(d.Rule, "default"))
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
	chosen := pl.choose(&d, queues)
	var counted map[int]int
	if loadBalanced(&d, rule, cfg) && len(queues) > 0 {
		counted = pl.balanceDevice(dev, &d, queues, chosen)
	}
	pl.place(&d, chosen, counted)
	return d
}

// resolve fills in d's rule, policy (auto resolved), mask and spread
// node and its IRQs as read, and returns its queue indices.
func (pl *planner) resolve(d *Device, rule *config.Rule, irqs []inventory.IRQ, classes []class) []int {
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
	return queues
}

// choose gives each queue its mask by count: the i-th CPU of the order
// (linear), the MANA driver's core walk (mask core), or the least
// loaded CPU first in the device's spread order (numa-hop).
func (pl *planner) choose(d *Device, queues []int) map[int]cpumask.Mask {
	chosen := make(map[int]cpumask.Mask, len(queues))
	switch {
	case d.Policy == config.PolicyLinear:
		for i, qi := range queues {
			cpu := d.Order[i%len(d.Order)]
			chosen[qi] = pl.maskFor(cpu, d.Mask)
			pl.counts.add(cpu)
		}
	case d.Mask == config.MaskCore:
		slots := coreSlots(pl.s, pl.s.Rings(d.Node, pl.allowed))
		for i, qi := range queues {
			core := slots[i%len(slots)]
			chosen[qi] = core
			pl.counts.add(core.First())
		}
	default:
		cur := pl.counts.cursor(d.Order)
		for _, qi := range queues {
			cpu := cur.next()
			chosen[qi] = cpumask.New(cpu)
			pl.counts.add(cpu)
		}
	}
	return chosen
}

// place sets Planned and Reason of d's IRQs: each queue IRQ its
// queue's chosen mask, each control IRQ the control mask. counted is
// count's CPU of each queue of a device balanced by load.
func (pl *planner) place(d *Device, chosen map[int]cpumask.Mask, counted map[int]int) {
	control := pl.controlMask(d.Node)
	for i := range d.IRQs {
		q := &d.IRQs[i]
		if q.handsOff() {
			continue
		}
		if q.Role != RoleQueue {
			why := "control IRQ: all allowed CPUs (device has no NUMA node)"
			if d.SpreadNode != topology.NoNode {
				why = fmt.Sprintf("control IRQ: allowed CPUs of the hop nearest node %d", d.Node)
			}
			if note, ok := pl.put(d, q, control); ok {
				q.Reason = why + note
			}
			continue
		}
		want := chosen[q.Queue]
		if d.Balance == config.BalanceLoad {
			pl.chose[q.Number] = HeldIRQ{Name: q.Name, CPU: want.First()}
		}
		note, ok := pl.put(d, q, want)
		if !ok {
			continue
		}
		q.CPU = q.Planned.First()
		q.Hop, q.Distance = pl.s.HopLevel(d.Node, q.CPU), pl.distance(d.Node, q.CPU)
		where := "device has no NUMA node"
		if d.SpreadNode != topology.NoNode {
			where = fmt.Sprintf("hop %d, distance %d from node %d", q.Hop, q.Distance, d.Node)
		}
		how := string(d.Policy)
		if d.Balance == config.BalanceLoad {
			how += ", balance load"
			if c := counted[q.Queue]; c != want.First() {
				where = fmt.Sprintf("count's CPU %d, ", c) + where
			}
		}
		q.Reason = fmt.Sprintf("%s: queue %d -> %s, %s", how, q.Queue, maskWord(q.Planned, d.Mask), where) + note
	}
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
			if note, ok := pl.put(d, q, m); ok {
				q.Reason = fmt.Sprintf("pinned to %s by %s", q.Planned, cmp.Or(d.Rule, "default")) + note
			}
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

func maskWord(m cpumask.Mask, mode config.MaskMode) string {
	if mode == config.MaskCore {
		return "core " + m.String()
	}
	return "CPU " + m.String()
}
