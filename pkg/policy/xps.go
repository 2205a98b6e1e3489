package policy

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"syscall"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/topology"
)

// TxQueue is the XPS plan of one tx queue (docs/kernel.md §8).
type TxQueue struct {
	Interface string `json:"interface"`
	Queue     int    `json:"queue"`
	IRQ       int    `json:"irq"` // the completion IRQ, -1 (null) for none
	// Current is xps_cpus as read; Planned empty when left alone.
	Current cpumask.Mask `json:"current"`
	Planned cpumask.Mask `json:"planned"`
	Reason  string       `json:"reason"`
}

// LeftAlone reports whether the plan does not touch the queue's XPS map.
func (t TxQueue) LeftAlone() bool { return t.Planned.IsEmpty() }

// planXPS plans tx queue k to follow queue k's transmit-completing IRQ.
func planXPS(s *topology.Snapshot, inv *inventory.Inventory, p *Plan) {
	for i := range p.Devices {
		d := &p.Devices[i]
		dev, ok := inv.Device(d.PCI)
		if d.PCI == "" || !ok {
			continue
		}
		if dev.TxQueuesErr != nil {
			d.XPSError = dev.TxQueuesErr.Error()
		}
		if len(dev.TxQueues) == 0 {
			continue
		}
		d.TxQueues = make([]TxQueue, len(dev.TxQueues))
		for j, tq := range dev.TxQueues {
			d.TxQueues[j] = TxQueue{Interface: tq.Interface, Queue: tq.Queue, IRQ: -1, Current: tq.XPS}
		}
		for lo := 0; lo < len(dev.TxQueues); {
			hi := lo + 1
			for hi < len(dev.TxQueues) && dev.TxQueues[hi].Interface == dev.TxQueues[lo].Interface {
				hi++
			}
			planInterfaceXPS(s, d, dev.TxQueues[lo:hi], d.TxQueues[lo:hi])
			lo = hi
		}
	}
}

// planInterfaceXPS plans one interface's tx queues out (read as in):
// each CPU of a completion IRQ's mask sends on its queue, every other
// online CPU (banned ones still send) on its nearest.
func planInterfaceXPS(s *topology.Snapshot, d *Device, in []inventory.TxQueue, out []TxQueue) {
	irqs := make([]IRQ, len(out))
	var targets []int // indices into out of the queues CPUs may send on
	for j, tq := range in {
		t := &out[j]
		q, found := completionIRQ(d, tq.Queue)
		if found {
			t.IRQ, irqs[j] = q.Number, q
		}
		switch {
		case d.XPS == config.XPSLeave:
			t.Reason = "xps leave: " + cmp.Or(d.Rule, "config")
		case tq.Err != nil:
			t.Reason = "left alone, " + xpsReadWhy(tq.Err)
		case !found:
			t.Reason = fmt.Sprintf("left alone: no completion IRQ for tx queue %d", tq.Queue)
		case q.LeftAlone():
			t.Reason = fmt.Sprintf("left alone: its completion IRQ %d is left alone", q.Number)
		default:
			targets = append(targets, j)
		}
	}
	if len(targets) == 0 {
		return
	}
	planned := make([]cpumask.Builder, len(out))
	own := map[int]bool{}
	for _, j := range targets {
		m := irqs[j].Planned.And(s.Online())
		planned[j].Or(m)
		for c := range m.All() {
			own[c] = true
		}
	}
	// Ties go to the queue with the fewest such CPUs, then the lowest.
	extra := make([]cpumask.Builder, len(out))
	count := make([]int, len(out))
	for c := range s.Online().All() {
		if own[c] {
			continue
		}
		best, bestDist := -1, 0
		for _, j := range targets {
			dist := cpuDistance(s, c, irqs[j].Planned)
			if best < 0 || dist < bestDist || (dist == bestDist && count[j] < count[best]) {
				best, bestDist = j, dist
			}
		}
		planned[best].Set(c)
		extra[best].Set(c)
		count[best]++
	}
	for _, j := range targets {
		t := &out[j]
		t.Planned = planned[j].Mask()
		t.Reason = fmt.Sprintf("xps follows completion IRQ %d on CPU %s", irqs[j].Number, irqs[j].Planned)
		if m := extra[j].Mask(); !m.IsEmpty() {
			t.Reason += fmt.Sprintf(", plus CPU %s (no queue on them; this one is nearest by NUMA distance)", m)
		}
	}
}

// completionIRQ returns d's first queue IRQ of queue k that transmits.
func completionIRQ(d *Device, k int) (IRQ, bool) {
	for _, q := range d.IRQs {
		if q.Role == RoleQueue && q.Queue == k && q.Dir.Transmits() {
			return q, true
		}
	}
	return IRQ{}, false
}

// cpuDistance is the least NUMA distance from cpu to m (MaxInt: unknown).
func cpuDistance(s *topology.Snapshot, cpu int, m cpumask.Mask) int {
	best := math.MaxInt
	from := s.NodeOfCPU(cpu)
	for c := range m.All() {
		if d := s.Distance(from, s.NodeOfCPU(c)); d >= 0 && d < best {
			best = d
		}
	}
	return best
}

// xpsReadWhy explains a read error of xps_cpus.
func xpsReadWhy(err error) string {
	switch {
	case errors.Is(err, inventory.ErrXPSUnsupported):
		return err.Error() // names the file and says "XPS unsupported" itself
	case errors.Is(err, syscall.EINVAL):
		return "traffic class unresolvable: " + err.Error()
	}
	return "xps_cpus unreadable: " + err.Error()
}
