package apply

import (
	"context"
	"maps"
	"slices"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/policy"
)

// Restore writes back the mask each IRQ had before Apply first changed
// it (restore_on_exit), in IRQ order, for the IRQs that inv, a fresh
// inventory, still lists under the same name: an IRQ freed or requested
// again under another name since the last round is not the one whose
// mask was saved. A nil inv restores every saved IRQ; those that
// vanished (ENOENT) are skipped. Restored, vanished and renamed IRQs
// are forgotten, so a second Restore only retries the ones that failed.
// Outcomes are classified as in Apply, without the ENOSPC fallback: an
// original mask is put back as it was.
func (a *Applier) Restore(ctx context.Context, inv *inventory.Inventory) Result {
	res := newResult()
	for _, n := range slices.Sorted(maps.Keys(a.originals)) {
		if ctx.Err() != nil {
			break
		}
		o := a.originals[n]
		if inv != nil {
			if q, ok := inv.IRQ(n); !ok || q.Name != o.name {
				delete(a.originals, n)
				continue
			}
		}
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
	return res
}
