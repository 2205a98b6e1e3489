//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// verifyEffective checks the daemon's verification of its writes on a
// real kernel, one that defers every move to the IRQ's next interrupt
// (QEMU's MSI without interrupt remapping): after the traffic every busy
// rx queue IRQ fired and moved, so its write is verified and forgotten
// (no effective_state in /plan); no IRQ is a mismatch; the verify round
// ran. The quiet tx queues may stay pending; how many is a figure.
func verifyEffective(r *Result, busy []guestinfo.IRQWindow) {
	d, ok := r.Data("t-plan")
	if !r.Check("t-effective-plan", ok && d.RC == 0, "/plan: present %v, exit %d", ok, d.RC) {
		return
	}
	var doc policy.Doc
	if err := json.Unmarshal(d.Output, &doc); !r.Check("t-effective-plan", err == nil, "/plan: %v", err) {
		return
	}
	state := map[int]policy.IRQ{}
	pending, mismatch := 0, []string{}
	for _, dev := range doc.Devices {
		for _, q := range dev.IRQs {
			state[q.Number] = q
			switch q.EffectiveState {
			case policy.EffectivePending:
				pending++
			case policy.EffectiveMismatch:
				mismatch = append(mismatch, fmt.Sprintf("irq %d %s: effective %s planned %s", q.Number, q.Name, q.Effective, q.Planned))
			}
		}
	}
	r.Metric("t_effective_pending", pending)
	var unverified []string
	for _, b := range busy {
		if q := state[b.Number]; q.EffectiveState != policy.EffectiveUnchecked && q.EffectiveState != policy.EffectiveVerified {
			unverified = append(unverified, fmt.Sprintf("irq %d %s: %s, effective %s planned %s", q.Number, q.Name, q.EffectiveState, q.Effective, q.Planned))
		}
	}
	r.Check("t-effective-busy-verified", len(unverified) == 0 && len(busy) > 0, "busy rx queue IRQs not verified: %v", unverified)
	r.Check("t-effective-no-mismatch", len(mismatch) == 0, "mismatched IRQs: %v", mismatch)

	m, ok := r.Data("t-metrics")
	rounds := verifyRounds.FindSubmatch(m.Output)
	n := 0
	if rounds != nil {
		n, _ = strconv.Atoi(string(rounds[1]))
	}
	r.Check("t-verify-round", ok && n >= 1, "numairqd_rounds_total{trigger=\"verify\"} = %d: %.300s", n, strings.TrimSpace(string(m.Output)))
}

var verifyRounds = regexp.MustCompile(`numairqd_rounds_total\{trigger="verify"\} (\d+)`)
