package apply

import (
	"context"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/policy"
)

// Restore writes back the mask each IRQ had before Apply first changed
// it (restore_on_exit), in IRQ order. IRQs that vanished (ENOENT) are
// skipped; so are IRQs now requested under another name, as far as the
// Applier has seen: call Annotate with a fresh inventory just before.
// Restored and vanished IRQs are forgotten, so a second Restore only
// retries the ones that failed. Outcomes are classified as in Apply,
// without the ENOSPC fallback: an original mask is put back as it was.
func (a *Applier) Restore(ctx context.Context) Result {
	start := time.Now()
	res := newResult()
	nums := make([]int, 0, len(a.originals))
	for n := range a.originals {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	for _, n := range nums {
		if ctx.Err() != nil {
			break
		}
		o := a.originals[n]
		q := policy.IRQ{Number: n, Name: o.name, Planned: o.mask, Current: o.mask, CPU: -1}
		err := a.write(ctx, n, o.name, o.mask)
		a.done(q, o.mask, err, &res)
		switch classify(err) {
		case KindOK, KindVanished, KindManaged:
			delete(a.originals, n)
		}
	}
	if res.Written > 0 || len(res.Failed) > 0 {
		a.log.Info("restored IRQ affinities found at start", zap.Int("written", res.Written),
			zap.Int("failed", len(res.Failed)))
	}
	res.Duration = time.Since(start)
	return res
}
