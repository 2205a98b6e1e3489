package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Doc is the JSON form of a Plan, printed by `numairqd plan --format
// json` and served at /plan: the plan's own tags, after the generation.
// Scripts rely on devices[].pci, driver, node, policy and irqs[].irq,
// name, queue, managed, current, planned: add keys, never rename them.
type Doc struct {
	Generation uint64 `json:"generation"` // the published state's; 0 from `numairqd plan`
	*Plan
}

// Doc returns the JSON form of p, empty lists as [], not null.
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

// nonNil is s, or an empty S for nil: [] in JSON, not null.
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
	if i := slices.Index(roleNames[:], string(b)); i > 0 {
		*r = Role(i)
		return nil
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

// MarshalJSON encodes d by the plan's tags, with null for the -1 of the
// queue and irq keys: only they can be -1, and quotes in strings are
// escaped, so `"queue":-1,` and `"irq":-1,` occur nowhere else.
func (d Doc) MarshalJSON() ([]byte, error) {
	type doc Doc // without the methods
	b, err := json.Marshal(doc(d))
	if err != nil {
		return nil, err
	}
	b = bytes.ReplaceAll(b, []byte(`"queue":-1,`), []byte(`"queue":null,`))
	return bytes.ReplaceAll(b, []byte(`"irq":-1,`), []byte(`"irq":null,`)), nil
}

// UnmarshalJSON decodes an IRQ of /plan, a null Queue as -1.
func (q *IRQ) UnmarshalJSON(b []byte) error {
	type irq IRQ // without the methods; null leaves the -1
	*q = IRQ{Queue: -1}
	return json.Unmarshal(b, (*irq)(q))
}

// UnmarshalJSON decodes a TxQueue of /plan, a null IRQ as -1.
func (t *TxQueue) UnmarshalJSON(b []byte) error {
	type txQueue TxQueue
	*t = TxQueue{IRQ: -1}
	return json.Unmarshal(b, (*txQueue)(t))
}

// UnmarshalJSON decodes a NAPIThread of /plan, null Queue and IRQ as -1.
func (t *NAPIThread) UnmarshalJSON(b []byte) error {
	type napiThread NAPIThread
	*t = NAPIThread{Queue: -1, IRQ: -1}
	return json.Unmarshal(b, (*napiThread)(t))
}
