package daemon

import (
	"fmt"
	"time"

	"github.com/numairqd/numairqd/pkg/policy"
)

// A write is verified by the rounds after it (policy/effective.go): the
// round's read (machine.Reader.Read) takes the effective CPUs and
// interrupt counts of the IRQs in the memory's Verify, the plan
// re-writes those the kernel kept outside after they fired, and a round
// that wrote asks the watcher for a CauseVerify hint VerifyDelay later,
// so a move the kernel did not make is seen without waiting for the
// next event or the resync.

// VerifyDelay is how long after a round that wrote the daemon checks
// the effective CPUs: long enough for a queue with traffic to fire and
// take a deferred move, short next to the resync.
const VerifyDelay = 2 * time.Second

// effectiveSummary is "N pending, M mismatched" for STATUS=, "" for none.
func effectiveSummary(p *policy.Plan) string {
	pending, mismatch := len(p.EffectiveIRQs(policy.EffectivePending)), len(p.EffectiveIRQs(policy.EffectiveMismatch))
	if pending+mismatch == 0 {
		return ""
	}
	return fmt.Sprintf("; effective CPUs outside the plan: %d pending, %d mismatched", pending, mismatch)
}
