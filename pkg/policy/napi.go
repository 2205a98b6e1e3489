package policy

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/napi"
)

// NAPIThread is the plan of a NAPI kthread (docs/kernel.md §9).
type NAPIThread struct {
	Interface string      `json:"interface"`
	NAPIID    int         `json:"napi_id"`
	PID       int         `json:"pid"`
	Comm      string      `json:"name"`
	Queue     int         `json:"queue"`     // -1 (null) when unknown
	Kind      napi.Kind   `json:"direction"` // "" when unknown
	IRQ       int         `json:"irq"`       // the IRQ it follows, -1 (null) for none
	Source    napi.Source `json:"source"`    // how it was found, "" when not resolved
	// Current is Cpus_allowed_list as read; Planned empty when left alone.
	Current cpumask.Mask `json:"current"`
	Planned cpumask.Mask `json:"planned"`
	Reason  string       `json:"reason"`
}

// LeftAlone reports whether the plan does not touch the thread.
func (t NAPIThread) LeftAlone() bool { return t.Planned.IsEmpty() }

// planNAPI plans each device's NAPI kthreads once the IRQs are placed.
func planNAPI(inv *inventory.Inventory, p *Plan) {
	for i := range p.Devices {
		d := &p.Devices[i]
		dev, ok := inv.Device(d.PCI)
		if d.PCI == "" || !ok {
			continue
		}
		n := dev.NAPI
		if n.Err != nil {
			d.NAPIError = n.Err.Error()
		}
		for _, th := range n.Threads {
			d.NAPIThreads = append(d.NAPIThreads, planNAPIThread(p, d, th))
		}
		for _, u := range n.Unresolved {
			iface := u.Interfaces[0]
			if i := slices.IndexFunc(u.Interfaces, func(s string) bool { return slices.Contains(dev.Interfaces, s) }); i >= 0 {
				iface = u.Interfaces[i]
			}
			d.NAPIThreads = append(d.NAPIThreads, NAPIThread{Interface: iface, NAPIID: -1, PID: u.PID, Comm: u.Comm, Queue: -1, IRQ: -1,
				Reason: fmt.Sprintf("left alone: its cut name %q fits interfaces %v", u.Comm, u.Interfaces)})
		}
		slices.SortStableFunc(d.NAPIThreads, func(a, b NAPIThread) int {
			return cmp.Or(cmp.Compare(a.Interface, b.Interface), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.PID, b.PID))
		})
	}
}

// planNAPIThread plans one thread of d.
func planNAPIThread(p *Plan, d *Device, th inventory.NAPIThread) NAPIThread {
	t := NAPIThread{Interface: th.Interface, NAPIID: th.NAPIID, PID: th.PID, Comm: th.Comm, Queue: th.Queue, Kind: th.Kind,
		IRQ: -1, Source: th.Source, Current: th.Affinity}
	q, found, why := threadIRQ(d, th)
	if found {
		t.IRQ = q.Number
	}
	switch {
	case d.NAPIMode == config.NAPIThreadsLeave:
		t.Reason = "napi_threads leave: " + cmp.Or(d.Rule, "config")
	case th.Err != nil:
		t.Reason = "left alone: " + th.Err.Error()
	case !found:
		t.Reason = "left alone: " + why
	}
	if t.Reason != "" {
		return t
	}
	mask, src := q.Planned, "planned"
	if q.LeftAlone() {
		mask, src = q.Current, "current (the IRQ is left alone)"
	}
	t.Planned = mask.And(p.online)
	if t.Planned.IsEmpty() {
		t.Reason = fmt.Sprintf("left alone: IRQ %d's %s CPUs %s are none online", q.Number, src, mask)
		return t
	}
	t.Reason = fmt.Sprintf("follows IRQ %d (%s) on its %s CPUs %s", q.Number, q.Name, src, t.Planned)
	return t
}

// threadIRQ finds th's IRQ among d's: napi-get's, else its queue's IRQ
// of its direction; why says why none.
func threadIRQ(d *Device, th inventory.NAPIThread) (IRQ, bool, string) {
	if th.IRQ >= 0 {
		for _, q := range d.IRQs {
			if q.Number == th.IRQ {
				return q, true, ""
			}
		}
		return IRQ{}, false, fmt.Sprintf("napi-get's IRQ %d is not the device's", th.IRQ)
	}
	if th.Queue < 0 || th.Kind == "" {
		return IRQ{}, false, "no IRQ known: napi-get gave none and no driver rule knows its queue"
	}
	serves := Dir.Transmits
	if th.Kind == napi.KindRX {
		serves = Dir.Receives
	}
	for _, q := range d.IRQs {
		if q.Role == RoleQueue && q.Queue == th.Queue && serves(q.Dir) {
			return q, true, ""
		}
	}
	return IRQ{}, false, fmt.Sprintf("no %s IRQ for queue %d", th.Kind, th.Queue)
}
