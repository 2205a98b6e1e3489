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
	counts  []int // by CPU id: queues of linear and mask core devices; -1 not allowed

	bal       Balancing
	held      Held // Memory.Held
	chose     Held // the plan's Held
	units     []unit
	devs      []balanceDev
	reset     int
	work      []deviceWork            // by device index
	hop       []hopQueue              // the queues of every numa-hop device, for spread
	relaxed   bool                    // spread took the package exception
	nearMasks map[[3]int]cpumask.Mask // near's cache
	bans      irqBans                 // other tools' IRQ bans
	apart     map[int]single          // by IRQ number: those planned apart from their device
}

// deviceWork is what begin leaves for finish about one device.
type deviceWork struct {
	rule   *config.Rule
	done   bool                 // placed by begin, or left alone
	queues []int                // its movable queue indices
	chosen map[int]cpumask.Mask // each queue's mask; numa-hop ones after spread
	took   cpumask.Mask         // the CPUs its queues got
	driver map[int]int          // each queue's CPU in the drivers' own spread
}

// begin resolves device dev's policy and places what needs no other
// device (ignore, pinned, linear, mask core); numa-hop queues join pl.hop.
func (pl *planner) begin(dev int, d Device, rule *config.Rule, irqs []inventory.IRQ, classes []class) Device {
	queues := pl.resolve(&d, rule, irqs, classes)
	pl.work = append(pl.work, deviceWork{rule: rule, done: true})
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
	pl.work[dev].queues, pl.work[dev].done = queues, false
	pl.choose(dev, &d, queues)
	return d
}

// finish balances device dev by load if asked, then plans its IRQs.
func (pl *planner) finish(dev int, d *Device, cfg *config.Config) {
	w := pl.work[dev]
	if w.done {
		return
	}
	var counted map[int]int
	if loadBalanced(d, w.rule, cfg) && len(w.queues) > 0 {
		counted = pl.balanceDevice(dev, d, w.queues, w.chosen, w.driver)
	}
	pl.place(d, w.chosen, w.driver, counted)
}

// resolve fills in d's policy, mask, node and IRQs; it returns its queues.
func (pl *planner) resolve(d *Device, rule *config.Rule, irqs []inventory.IRQ, classes []class) []int {
	d.Policy, d.Mask, d.Balance = config.PolicyAuto, config.MaskCPU, config.BalanceCount
	if rule != nil {
		d.Policy, d.Mask = rule.Policy, rule.Mask
		d.Rule = ruleLabel(rule)
		if rule.Node != nil {
			d.Node = *rule.Node
		}
	}
	d.SpreadNode = pl.s.SpreadNode(d.Node)
	d.IRQs = make([]IRQ, len(irqs))
	for i, q := range irqs {
		d.IRQs[i] = IRQ{Number: q.Number, Name: q.Name, Role: classes[i].role, Queue: classes[i].queue, Dir: classes[i].dir,
			QueueSource: classes[i].source, QueueNote: classes[i].note,
			Current: q.Affinity, CPU: -1, Hop: -1, Distance: -1, DriversCPU: -1, DriversDistance: -1}
		r, refused := pl.refused[q.Number]
		switch {
		case q.Managed:
			d.IRQs[i].Managed, d.IRQs[i].Reason = true, "managed by the kernel: "+q.ManagedReason
		case refused && r.Name == q.Name:
			d.IRQs[i].Managed, d.IRQs[i].Reason = true, "managed by the kernel: write failed with "+r.Errno
		case q.Unreadable != "":
			d.IRQs[i].Unreadable, d.IRQs[i].Reason = true, "left alone, files unreadable: "+q.Unreadable
		case pl.apart[q.Number] != single{}:
			pl.planSingle(&d.IRQs[i], pl.apart[q.Number])
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

// choose gives each queue of device dev its mask by count: the i-th CPU
// of the order (linear) or the MANA core walk (mask core), fixed for
// spread; numa-hop queues join pl.hop.
func (pl *planner) choose(dev int, d *Device, queues []int) {
	w := &pl.work[dev]
	w.chosen = make(map[int]cpumask.Mask, len(queues))
	w.driver = make(map[int]int, len(queues))
	var slots []cpumask.Mask
	if d.Mask == config.MaskCore && d.Policy != config.PolicyLinear {
		slots = coreSlots(pl.s, pl.s.Rings(d.Node, pl.allowed))
	}
	var current []int
	if len(queues) > 0 {
		current = currentCPUs(d.IRQs, queues)
	}
	for i, qi := range queues {
		cpu := d.Order[i%len(d.Order)]
		switch {
		case d.Policy == config.PolicyLinear:
			w.chosen[qi] = cpumask.New(cpu)
			if d.Mask == config.MaskCore {
				w.chosen[qi] = pl.s.Siblings(cpu).And(pl.allowed)
			}
		case slots != nil:
			w.chosen[qi] = slots[i%len(slots)]
			cpu = w.chosen[qi].First()
		default:
			hq := hopQueue{dev: dev, queue: qi, rank: i, kernel: cpu, node: topology.NoNode, pkg: -1, current: current[qi], cpu: -1}
			if d.SpreadNode != topology.NoNode {
				hq.node, hq.bound = d.Node, pl.s.Distance(d.Node, pl.s.NodeOfCPU(cpu))
			}
			if c, ok := pl.s.CPU(cpu); ok {
				hq.pkg = c.Package
			}
			pl.hop = append(pl.hop, hq)
			w.driver[qi] = cpu
			continue
		}
		w.driver[qi] = cpu
		pl.counts[cpu]++
	}
}

// currentCPUs returns by queue index its first IRQ's single CPU, or -1.
func currentCPUs(irqs []IRQ, queues []int) []int {
	out := make([]int, queues[len(queues)-1]+1)
	for i := range out {
		out[i] = -2 // not seen yet
	}
	for _, q := range irqs {
		if q.Role != RoleQueue || q.Queue >= len(out) || out[q.Queue] != -2 {
			continue
		}
		out[q.Queue] = -1
		if q.Current.Weight() == 1 {
			out[q.Queue] = q.Current.First()
		}
	}
	for i, c := range out {
		out[i] = max(c, -1)
	}
	return out
}

// spread places every numa-hop queue at once and fills in Device.Taken.
func (pl *planner) spread(devs []Device) {
	sp := newSpreader(pl.s, pl.allowed, pl.counts)
	pl.relaxed = sp.place(pl.hop)
	for _, q := range pl.hop {
		pl.work[q.dev].chosen[q.queue] = cpumask.New(q.cpu)
	}
	for i := range pl.work {
		w := &pl.work[i]
		var b cpumask.Builder
		for _, m := range w.chosen {
			b.Set(m.First())
		}
		w.took = b.Mask()
	}
	for i := range devs {
		d, w := &devs[i], pl.work[i]
		if d.Policy != config.PolicyNUMAHop || d.Mask != config.MaskCPU {
			continue
		}
		var moved cpumask.Builder
		for qi, cpu := range w.driver {
			if w.chosen[qi].First() != cpu {
				moved.Set(cpu)
			}
		}
		d.Taken = pl.takenOf(i, devs, moved.Mask())
	}
}

// takenOf returns, by device, the CPUs of cpus other devices took.
func (pl *planner) takenOf(dev int, devs []Device, cpus cpumask.Mask) []Taken {
	if cpus.IsEmpty() {
		return nil
	}
	var out []Taken
	var rest cpumask.Builder
	more := 0
	for i, w := range pl.work {
		cpus := w.took.And(cpus)
		switch {
		case i == dev || cpus.IsEmpty():
		case len(out) < maxTaken:
			out = append(out, Taken{Device: devs[i].Label(), CPUs: cpus})
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

// maxTaken bounds the devices a Taken list names; the rest share one entry.
const maxTaken = 8

// place plans d's queue IRQs on their chosen masks, control IRQs on
// the control mask; counted is count's CPU of each load-balanced queue.
func (pl *planner) place(d *Device, chosen map[int]cpumask.Mask, driver, counted map[int]int) {
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
		q.CPU, q.DriversCPU = q.Planned.First(), driver[q.Queue]
		q.Hop, q.Distance, q.DriversDistance = pl.s.HopLevel(d.Node, q.CPU), -1, -1
		where := "device has no NUMA node"
		if d.SpreadNode != topology.NoNode {
			q.Distance = pl.s.Distance(d.Node, pl.s.NodeOfCPU(q.CPU))
			q.DriversDistance = pl.s.Distance(d.Node, pl.s.NodeOfCPU(q.DriversCPU))
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

// leaveAll leaves d's IRQs alone for why.
func (pl *planner) leaveAll(d *Device, noCPU bool, why string) {
	for i := range d.IRQs {
		if q := &d.IRQs[i]; !q.handsOff() {
			q.Reason, q.NoCPU = why, noCPU
		}
	}
}

// controlMask is the allowed CPUs of the nearest hop with any (NoNode: all).
func (pl *planner) controlMask(node int) cpumask.Mask {
	for _, ring := range pl.s.Rings(node, pl.allowed) {
		if len(ring) > 0 {
			return cpumask.New(ring...)
		}
	}
	return pl.allowed
}

// coreSlots is MANA's walk (mana_irq_setup_numa_aware): per hop, passes
// over its cores, one IRQ per core per pass, as many as its threads.
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

// queueIndices returns the movable queue IRQs' distinct queues, ascending.
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

// newCounts returns 0 per allowed CPU id, -1 for the others.
func newCounts(allowed cpumask.Mask) []int {
	n := make([]int, allowed.Last()+1)
	for i := range n {
		if !allowed.Contains(i) {
			n[i] = -1
		}
	}
	return n
}

// put plans q on m but, like irqbalance after ENOSPC, on no full CPU q
// is not on: m loses its full CPUs, or moves on along d.Order. It
// returns the note for q's reason; !ok when all of the order is full.
func (pl *planner) put(d *Device, q *IRQ, m cpumask.Mask) (note string, ok bool) {
	q.Planned = m
	if m.Equal(q.Current) || !m.Intersects(pl.full) {
		return "", true
	}
	full := m.And(pl.full)
	note = fmt.Sprintf("; CPUs %s have no free vector", full)
	if full.Weight() == 1 {
		note = fmt.Sprintf("; CPU %s has no free vector", full)
	}
	if left := m.AndNot(pl.full); !left.IsEmpty() {
		q.Planned = left
		return note + ", left out", true
	}
	n := len(d.Order)
	from := slices.Index(d.Order, m.First())
	for k := 1; k <= n; k++ {
		if c := d.Order[(from+k)%n]; !pl.full.Contains(c) {
			q.Planned = cpumask.New(c)
			return note + ", next CPU of the order", true
		}
	}
	q.Planned, q.NoCPU = cpumask.Mask{}, true
	q.Reason = fmt.Sprintf("no allowed CPU has a free vector (full: %s)", pl.full)
	return "", false
}
