package policy

import (
	"fmt"
	"maps"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
)

// MaxRewrites bounds re-writes of a mask the kernel keeps an IRQ outside.
const MaxRewrites = 3

// Verify is a write whose effect the kernel has not shown yet.
type Verify struct {
	Name string       // the same number under another name is a new IRQ
	Mask cpumask.Mask // what was written
	// Count is the interrupt count just after the write; without it
	// (!Counted) the IRQ stays pending.
	Count    uint64
	Counted  bool
	Rewrites int // writes of Mask after the first
}

// Verifies are the writes to verify, by IRQ number; nil means none.
type Verifies map[int]Verify

// Masks are the masks written, by IRQ, for inventory.FS.ReadEffective.
func (v Verifies) Masks() map[int]cpumask.Mask {
	out := make(map[int]cpumask.Mask, len(v))
	for n, e := range v {
		out[n] = e.Mask
	}
	return out
}

// Fresh returns v with no re-writes counted, for a fresh read.
func (v Verifies) Fresh() Verifies {
	out := maps.Clone(v)
	for n, e := range out {
		e.Rewrites = 0
		out[n] = e
	}
	return out
}

// EffectiveState compares an IRQ's effective CPUs with an earlier write.
type EffectiveState uint8

const (
	EffectiveUnchecked EffectiveState = iota // no write to verify, or nothing read
	EffectiveVerified                        // inside the planned mask
	EffectivePending                         // outside, not fired since the write
	EffectiveRewrite                         // outside after firing: written again
	EffectiveMismatch                        // outside after MaxRewrites re-writes
)

var effectiveNames = [...]string{"", "verified", "pending", "rewrite", "mismatch"}

// String is the state's name in /plan ("" for unchecked).
func (s EffectiveState) String() string {
	if int(s) < len(effectiveNames) {
		return effectiveNames[s]
	}
	return fmt.Sprintf("EffectiveState(%d)", uint8(s))
}

// verify sets the effective CPUs of every IRQ in eff, and the
// EffectiveState of those the plan keeps on the mask mem wrote.
func verify(p *Plan, eff map[int]inventory.Effective, mem Verifies) {
	for di := range p.Devices {
		for i := range p.Devices[di].IRQs {
			q := &p.Devices[di].IRQs[i]
			e, read := eff[q.Number]
			if !read {
				continue
			}
			q.Effective = e.CPUs
			v, ok := mem[q.Number]
			if !ok || v.Name != q.Name || q.LeftAlone() || !q.Planned.Equal(v.Mask) || !q.Planned.Equal(q.Current) {
				continue
			}
			if e.CPUs.IsEmpty() {
				if e.Err != "" {
					q.Reason += "; effective CPUs unknown: " + e.Err
				}
				continue
			}
			q.EffectiveState = verdict(v, e)
			q.Reason += effectiveNote(q, v)
		}
	}
}

// verdict compares e with the write v.
func verdict(v Verify, e inventory.Effective) EffectiveState {
	switch {
	case e.CPUs.IsSubsetOf(v.Mask):
		return EffectiveVerified
	case !v.Counted || !e.Counted || e.Count == v.Count:
		return EffectivePending
	case v.Rewrites < MaxRewrites:
		return EffectiveRewrite
	}
	return EffectiveMismatch
}

// effectiveNote is what q's reason adds for its state.
func effectiveNote(q *IRQ, v Verify) string {
	cpus := "CPU"
	if q.Effective.Weight() > 1 {
		cpus = "CPUs"
	}
	outside := fmt.Sprintf("; effective %s %s outside planned %s", cpus, q.Effective, q.Planned)
	switch q.EffectiveState {
	case EffectivePending:
		return outside + ", not fired since the write: the move waits for its next interrupt"
	case EffectiveRewrite:
		return outside + fmt.Sprintf(" after firing; re-write %d/%d", v.Rewrites+1, MaxRewrites)
	case EffectiveMismatch:
		return outside + fmt.Sprintf(" after %d re-writes; left until the plan changes or a fresh read", MaxRewrites)
	}
	return ""
}

// wantsWrite reports whether the plan writes q.
func (q IRQ) wantsWrite() bool {
	return !q.LeftAlone() && (!q.Planned.Equal(q.Current) || q.EffectiveState == EffectiveRewrite)
}

// EffectiveIRQs lists the IRQs in state s, for logs and metrics.
func (p *Plan) EffectiveIRQs(s EffectiveState) []IRQ {
	return p.irqsWhere(func(q IRQ) bool { return q.EffectiveState == s })
}

// Memory is what earlier rounds learned that no read shows.
type Memory struct {
	Refused Refusals     // IRQs the kernel refused to move
	Full    cpumask.Mask // CPUs where a write got ENOSPC: no free vector
	Held    Held         // the placement load balancing chose
	Verify  Verifies     // writes the kernel has not shown in effect yet
	// Backoff are IRQs another writer keeps moving (pkg/fight) whose
	// writes wait this round; Apply skips them.
	Backoff map[int]bool
}

// Learned reports whether m holds a refusal or full CPU before did not.
func (m Memory) Learned(before Memory) bool {
	if !m.Full.IsSubsetOf(before.Full) {
		return true
	}
	for n, r := range m.Refused {
		if before.Refused[n] != r {
			return true
		}
	}
	return false
}

// Refusal is an IRQ the kernel refused to move although procfs did not
// say it was managed; it holds while the IRQ keeps its name.
type Refusal struct {
	Name  string
	Errno string // "EIO" or "EPERM"
}

// Refusals are the refused IRQs by number; nil means none.
type Refusals map[int]Refusal

// Held is load balancing's CPU of each queue IRQ, while it keeps its name.
type Held map[int]HeldIRQ

// HeldIRQ is one IRQ of a Held.
type HeldIRQ struct {
	Name string
	CPU  int
}
