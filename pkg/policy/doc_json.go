package policy

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/napi"
)

// Doc is the JSON form of a Plan, printed by `numairqd plan --format
// json` and served at /plan: the plan's own tags, after the generation.
// Scripts rely on devices[].pci, driver, node, policy and irqs[].irq,
// name, queue, managed, current, planned: add keys, never rename them.
type Doc struct {
	// Generation is that of the daemon's published state (/plan); 0
	// from `numairqd plan`, which runs no rounds.
	Generation uint64 `json:"generation"`
	*Plan
}

// Doc returns the JSON form of p. Its lists are [] when empty, never
// null; p itself is not changed.
func (p *Plan) Doc() Doc {
	c := *p
	c.Excluded, c.Devices = nonNil(c.Excluded), slices.Clone(nonNil(c.Devices))
	for i := range c.Devices {
		d := &c.Devices[i]
		d.Drivers, d.Interfaces, d.IRQs = nonNil(d.Drivers), nonNil(d.Interfaces), nonNil(d.IRQs)
		d.TxQueues, d.NAPIThreads = nonNil(d.TxQueues), nonNil(d.NAPIThreads)
	}
	if c.Balance != nil {
		b := *c.Balance
		b.CPUs = nonNil(b.CPUs)
		c.Balance = &b
	}
	return Doc{Plan: &c}
}

func nonNil[S ~[]E, E any](s S) S {
	if s == nil {
		return S{}
	}
	return s
}

// MarshalText names the role as String does.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads a role MarshalText wrote.
func (r *Role) UnmarshalText(b []byte) error {
	for _, c := range []Role{RoleControl, RoleQueue} {
		if c.String() == string(b) {
			*r = c
			return nil
		}
	}
	return fmt.Errorf("unknown IRQ role %q: want control or queue", b)
}

// MarshalText names the state as String does.
func (s EffectiveState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a state MarshalText wrote.
func (s *EffectiveState) UnmarshalText(b []byte) error {
	i := slices.Index(effectiveNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("unknown effective_state %q: want verified, pending, rewrite or mismatch", b)
	}
	*s = EffectiveState(i)
	return nil
}

// The JSON forms of IRQ, TxQueue and NAPIThread differ from the types
// in one way: a queue or IRQ number of -1 (none) is null. Each encodes
// through a copy of its fields in JSON order with those numbers as
// pointers, and decodes null back to -1.

// irqJSON is an IRQ in JSON: Queue is null for a control IRQ; Planned
// is "" when the IRQ is left alone; Effective and EffectiveState are
// left out where effective_affinity_list was not read.
type irqJSON struct {
	Number          int            `json:"irq"`
	Name            string         `json:"name"`
	Role            Role           `json:"role"`
	Queue           *int           `json:"queue"`
	QueueSource     string         `json:"queue_source,omitempty"`
	QueueNote       string         `json:"queue_note,omitempty"`
	Managed         bool           `json:"managed"`
	Current         cpumask.Mask   `json:"current"`
	Planned         cpumask.Mask   `json:"planned"`
	Hop             int            `json:"hop"`
	Distance        int            `json:"distance"`
	DriversCPU      int            `json:"drivers_cpu"`
	DriversDistance int            `json:"drivers_distance"`
	NoCPU           bool           `json:"no_cpu"`
	Unreadable      bool           `json:"unreadable"`
	Load            float64        `json:"load"`
	Reason          string         `json:"reason"`
	Effective       cpumask.Mask   `json:"effective,omitzero"`
	EffectiveState  EffectiveState `json:"effective_state,omitempty"`
}

// MarshalJSON writes q as irqJSON.
func (q IRQ) MarshalJSON() ([]byte, error) {
	return json.Marshal(irqJSON{q.Number, q.Name, q.Role, orNull(q.Queue), q.QueueSource, q.QueueNote, q.Managed, q.Current, q.Planned,
		q.Hop, q.Distance, q.DriversCPU, q.DriversDistance, q.NoCPU, q.Unreadable, q.Load, q.Reason, q.Effective, q.EffectiveState})
}

// UnmarshalJSON reads what MarshalJSON wrote; what it leaves out (Dir,
// QueueIDs, CPU) is zero.
func (q *IRQ) UnmarshalJSON(b []byte) error {
	var j irqJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*q = IRQ{Number: j.Number, Name: j.Name, Role: j.Role, Queue: minusOne(j.Queue), QueueSource: j.QueueSource, QueueNote: j.QueueNote,
		Managed: j.Managed, Current: j.Current, Planned: j.Planned, Hop: j.Hop, Distance: j.Distance, DriversCPU: j.DriversCPU,
		DriversDistance: j.DriversDistance, NoCPU: j.NoCPU, Unreadable: j.Unreadable, Load: j.Load, Reason: j.Reason,
		Effective: j.Effective, EffectiveState: j.EffectiveState}
	return nil
}

// txQueueJSON is a TxQueue in JSON: IRQ is null when the queue has no
// completion IRQ.
type txQueueJSON struct {
	Interface string       `json:"interface"`
	Queue     int          `json:"queue"`
	IRQ       *int         `json:"irq"`
	Current   cpumask.Mask `json:"current"`
	Planned   cpumask.Mask `json:"planned"`
	Reason    string       `json:"reason"`
}

// MarshalJSON writes t as txQueueJSON.
func (t TxQueue) MarshalJSON() ([]byte, error) {
	return json.Marshal(txQueueJSON{t.Interface, t.Queue, orNull(t.IRQ), t.Current, t.Planned, t.Reason})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (t *TxQueue) UnmarshalJSON(b []byte) error {
	var j txQueueJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*t = TxQueue{Interface: j.Interface, Queue: j.Queue, IRQ: minusOne(j.IRQ), Current: j.Current, Planned: j.Planned, Reason: j.Reason}
	return nil
}

// napiThreadJSON is a NAPIThread in JSON: Queue and IRQ are null, and
// Direction "", when not known.
type napiThreadJSON struct {
	Interface string       `json:"interface"`
	NAPIID    int          `json:"napi_id"`
	PID       int          `json:"pid"`
	Comm      string       `json:"name"`
	Queue     *int         `json:"queue"`
	Kind      napi.Kind    `json:"direction"`
	IRQ       *int         `json:"irq"`
	Source    napi.Source  `json:"source"`
	Current   cpumask.Mask `json:"current"`
	Planned   cpumask.Mask `json:"planned"`
	Reason    string       `json:"reason"`
}

// MarshalJSON writes t as napiThreadJSON.
func (t NAPIThread) MarshalJSON() ([]byte, error) {
	return json.Marshal(napiThreadJSON{t.Interface, t.NAPIID, t.PID, t.Comm, orNull(t.Queue), t.Kind, orNull(t.IRQ), t.Source,
		t.Current, t.Planned, t.Reason})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (t *NAPIThread) UnmarshalJSON(b []byte) error {
	var j napiThreadJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*t = NAPIThread{Interface: j.Interface, NAPIID: j.NAPIID, PID: j.PID, Comm: j.Comm, Queue: minusOne(j.Queue), Kind: j.Kind, IRQ: minusOne(j.IRQ),
		Source: j.Source, Current: j.Current, Planned: j.Planned, Reason: j.Reason}
	return nil
}

// orNull is &n, nil for -1.
func orNull(n int) *int {
	if n < 0 {
		return nil
	}
	return &n
}

// minusOne is *p, -1 for nil.
func minusOne(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}
