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

// planner holds what one Compute call shares between devices.
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
	took  []Taken // the CPUs each device's queues took so far, by device
}

// device plans the IRQs of device number dev under its rule (nil: defaults).
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

// resolve fills in d's rule, policy, mask, spread node and IRQs as
// read, and returns its queue indices.
func (pl *planner) resolve(d *Device, rule *config.Rule, irqs []inventory.IRQ, classes []class) []int {
	d.Policy, d.Mask, d.Balance = config.PolicyAuto, config.MaskCPU, config.BalanceCount
	if rule != nil {
		d.Policy, d.Mask = rule.Policy, rule.Mask
		d.Rule = fmt.Sprintf("rule at line %d", rule.Line)
		if rule.Name != "" {
			d.Rule = fmt.Sprintf("rule %q (line %d)", rule.Name, rule.Line)
		}
		if rule.Node != nil {
			d.Node = *rule.Node
		}
	}
	d.SpreadNode = pl.s.SpreadNode(d.Node)
	d.IRQs = make([]IRQ, len(irqs))
	for i, q := range irqs {
		d.IRQs[i] = IRQ{Number: q.Number, Name: q.Name, Role: classes[i].role, Queue: classes[i].queue, Dir: classes[i].dir,
			QueueSource: classes[i].source, QueueNote: classes[i].note,
			Current: q.Affinity, CPU: -1, Hop: -1, Distance: -1}
		// The kernel owns q when the inventory found it managed or an
		// earlier write to it under this name was refused.
		r, refused := pl.refused[q.Number]
		switch {
		case q.Managed:
			d.IRQs[i].Managed, d.IRQs[i].Reason = true, "managed by the kernel: "+q.ManagedReason
		case refused && r.Name == q.Name:
			d.IRQs[i].Managed, d.IRQs[i].Reason = true, "managed by the kernel: write failed with "+r.Errno
		case q.Unreadable != "":
			d.IRQs[i].Unreadable, d.IRQs[i].Reason = true, "left alone, files unreadable: "+q.Unreadable
		}
	}
	queues := queueIndices(d.IRQs)
	auto := d.Policy == config.PolicyAuto
	if auto {
		d.Policy = config.PolicyNUMAHop
		if len(queues) > 0 && len(queues) >= pl.allowed.Weight() {
			d.Policy = config.PolicyLinear
		}
	}
	d.PolicyWhy = policyWhy(d, auto, len(queues), pl.allowed)
	return queues
}

// choose gives each queue its mask by count: the i-th CPU of the order
// (linear), the MANA driver's core walk (mask core), or the least
// loaded CPU first in the device's spread order (numa-hop).
func (pl *planner) choose(d *Device, queues []int) map[int]cpumask.Mask {
	chosen := make(map[int]cpumask.Mask, len(queues))
	var took []int
	switch {
	case d.Policy == config.PolicyLinear:
		for i, qi := range queues {
			cpu := d.Order[i%len(d.Order)]
			chosen[qi] = cpumask.New(cpu)
			if d.Mask == config.MaskCore {
				chosen[qi] = pl.s.Siblings(cpu).And(pl.allowed)
			}
			pl.counts.add(cpu)
			took = append(took, cpu)
		}
	case d.Mask == config.MaskCore:
		slots := coreSlots(pl.s, pl.s.Rings(d.Node, pl.allowed))
		for i, qi := range queues {
			chosen[qi] = slots[i%len(slots)]
			pl.counts.add(chosen[qi].First())
			took = append(took, chosen[qi].First())
		}
	default:
		if len(queues) > 0 {
			d.Taken = pl.takenOf(pl.busier(d.Order))
		}
		cur := &cursor{qc: &pl.counts, order: d.Order, level: pl.counts.min}
		for _, qi := range queues {
			cpu := cur.next()
			chosen[qi] = cpumask.New(cpu)
			pl.counts.add(cpu)
			took = append(took, cpu)
		}
	}
	if len(took) > 0 {
		pl.took = append(pl.took, Taken{Device: d.Label(), CPUs: cpumask.New(took...)})
	}
	return chosen
}

// busier returns the CPUs of order with more queues than the fewest:
// the ones numa-hop's walk passes over, which earlier devices took.
// None when the counts are even, as then the order alone decides.
func (pl *planner) busier(order []int) cpumask.Mask {
	var b cpumask.Builder
	for _, cpu := range order {
		if pl.counts.get(cpu) > pl.counts.min {
			b.Set(cpu)
		}
	}
	return b.Mask()
}

// takenOf returns the CPUs of cpus that earlier devices took, by device.
func (pl *planner) takenOf(cpus cpumask.Mask) []Taken {
	if cpus.IsEmpty() {
		return nil
	}
	var out []Taken
	var rest cpumask.Builder
	more := 0
	for _, t := range pl.took {
		cpus := t.CPUs.And(cpus)
		switch {
		case cpus.IsEmpty():
		case len(out) < maxTaken:
			out = append(out, Taken{Device: t.Device, CPUs: cpus})
		default:
			more++
			rest.Or(cpus)
		}
	}
	if more > 0 {
		out = append(out, Taken{Device: fmt.Sprintf("%d more devices", more), CPUs: rest.Mask()})
	}
	return out
}

// maxTaken bounds the devices a Taken list names one by one; the rest
// share one entry. Without it the lists grow with the square of the
// device count (hundreds of SR-IOV functions), in /plan and the text.
const maxTaken = 8

// place plans each queue IRQ of d on its queue's chosen mask, each
// control IRQ on the control mask; counted is count's CPU of each queue
// balanced by load.
func (pl *planner) place(d *Device, chosen map[int]cpumask.Mask, counted map[int]int) {
	control, why, word := pl.controlMask(d.Node), "control IRQ: all allowed CPUs (device has no NUMA node)", "CPU"
	if d.SpreadNode != topology.NoNode {
		why = fmt.Sprintf("control IRQ: allowed CPUs of the hop nearest node %d", d.Node)
	}
	if d.Mask == config.MaskCore {
		word = "core"
	}
	for i := range d.IRQs {
		q := &d.IRQs[i]
		if q.handsOff() {
			continue
		}
		if q.Role != RoleQueue {
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
		q.Hop, q.Distance = pl.s.HopLevel(d.Node, q.CPU), -1
		if d.Node != topology.NoNode {
			q.Distance = pl.s.Distance(d.Node, pl.s.NodeOfCPU(q.CPU))
		}
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
		q.Reason = fmt.Sprintf("%s: queue %d -> %s %s, %s", how, q.Queue, word, q.Planned, where) + note
	}
}

// pinned writes the rule's CPUs (the allowed ones) to every IRQ.
func (pl *planner) pinned(d *Device, cpus cpumask.Mask) {
	m := cpus.And(pl.allowed)
	d.PolicyWhy += fmt.Sprintf(": CPUs %s", cpus)
	if !m.Equal(cpus) {
		d.PolicyWhy += fmt.Sprintf(", of which %s allowed", orNone(m))
	}
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

// leaveAll leaves the device's IRQs alone for why, with NoCPU noCPU.
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

// coreSlots is the MANA driver's walk (mana_irq_setup_numa_aware): hop
// by hop, passes over the hop's cores (by first CPU), one IRQ per core
// per pass, as many as the hop's threads; a slot is a core's siblings.
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
		for i := range ring {
			slots = append(slots, cores[i%len(cores)])
		}
	}
	return slots
}

// queueIndices returns the distinct queue indices of the movable queue
// IRQs, ascending: IRQs sharing one (rx and tx of a pair) share a CPU.
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
