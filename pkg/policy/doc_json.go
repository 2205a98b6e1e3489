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

// MarshalJSON encodes q by its tags, Queue -1 as null.
func (q IRQ) MarshalJSON() ([]byte, error) {
	type irq IRQ // without the methods
	return marshalNull(irq(q), "queue")
}

// UnmarshalJSON decodes what MarshalJSON wrote, null Queue as -1.
func (q *IRQ) UnmarshalJSON(b []byte) error {
	type irq IRQ
	j := irq{Queue: -1} // null leaves a number as it is
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*q = IRQ(j)
	return nil
}

// MarshalJSON encodes t by its tags, IRQ -1 as null.
func (t TxQueue) MarshalJSON() ([]byte, error) {
	type txQueue TxQueue
	return marshalNull(txQueue(t), "irq")
}

// UnmarshalJSON decodes what MarshalJSON wrote, null IRQ as -1.
func (t *TxQueue) UnmarshalJSON(b []byte) error {
	type txQueue TxQueue
	j := txQueue{IRQ: -1}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*t = TxQueue(j)
	return nil
}

// MarshalJSON encodes t by its tags, Queue and IRQ -1 as null.
func (t NAPIThread) MarshalJSON() ([]byte, error) {
	type napiThread NAPIThread
	return marshalNull(napiThread(t), "queue", "irq")
}

// UnmarshalJSON decodes what MarshalJSON wrote, null Queue and IRQ as
// -1.
func (t *NAPIThread) UnmarshalJSON(b []byte) error {
	type napiThread NAPIThread
	j := napiThread{Queue: -1, IRQ: -1}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*t = NAPIThread(j)
	return nil
}

// marshalNull encodes v, a struct of flat fields, with null for the
// value -1 of each key in keys: what a tag cannot say. The match is
// the key's: the encoder escapes every quote inside a string value, so
// `"queue":-1,` occurs nowhere else, and the comma ends the number.
func marshalNull(v any, keys ...string) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		b = bytes.Replace(b, []byte(`"`+k+`":-1,`), []byte(`"`+k+`":null,`), 1)
	}
	return b, nil
}
