package daemon

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
)

// A write is verified by the rounds after it (policy/effective.go): the
// round's read (machine.Reader.Read) takes the effective CPUs and
// interrupt counts of the IRQs in the memory's Verify, the plan
// re-writes those the kernel kept outside after they fired, and a round that wrote schedules a "verify" round
// VerifyDelay later, so a move the kernel did not make is seen without
// waiting for the next event or the resync.

// VerifyDelay is how long after a round that wrote the daemon checks
// the effective CPUs: long enough for a queue with traffic to fire and
// take a deferred move, short next to the resync.
const VerifyDelay = 2 * time.Second

// warnMismatched warns once per IRQ and planned mask of an IRQ the
// kernel keeps outside its plan after every re-write; the IRQ is
// forgotten when it is verified or planned elsewhere.
func (d *Daemon) warnMismatched(st *state.State) {
	next := map[int]string{}
	for _, d2 := range st.Plan.Devices {
		for _, q := range d2.IRQs {
			key := q.Name + "@" + q.Planned.String()
			switch {
			case q.EffectiveState == policy.EffectiveMismatch && d.mismatched[q.Number] != key:
				d.log.Warn("the kernel keeps the IRQ outside its planned CPUs after every re-write; left there until the plan changes or the next fresh read",
					zap.Int("irq", q.Number), zap.String("name", q.Name), zap.Stringer("planned", q.Planned),
					zap.Stringer("effective", q.Effective), zap.Int("rewrites", policy.MaxRewrites))
				next[q.Number] = key
			case q.EffectiveState > policy.EffectiveVerified && d.mismatched[q.Number] == key:
				next[q.Number] = key
			}
		}
	}
	d.mismatched = next
}

// verifyAfter arms the verify round when st wrote, and says so.
func (d *Daemon) verifyAfter(st *state.State) {
	if st != nil && st.Apply.Written > 0 {
		d.verifyC = time.After(VerifyDelay)
	}
}

// effectiveSummary is "N pending, M mismatched" for STATUS=, "" for none.
func effectiveSummary(p *policy.Plan) string {
	pending, mismatch := len(p.EffectiveIRQs(policy.EffectivePending)), len(p.EffectiveIRQs(policy.EffectiveMismatch))
	if pending+mismatch == 0 {
		return ""
	}
	return fmt.Sprintf("; effective CPUs outside the plan: %d pending, %d mismatched", pending, mismatch)
}
