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
// Outcomes are classified as in Apply; an original mask is put back as
// it was. Then the tx queues' XPS maps are restored the same way, and
// the NAPI kthreads' CPUs (restoreNAPI).
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
		w := policy.Write{Kind: policy.WriteIRQAffinity, IRQ: n, Name: o.name, After: o.mask}
		err := a.write(ctx, n, o.name, o.mask)
		kind := classify(err)
		res.record(w, kind, errnoName(err))
		if kind.Failed() {
			a.log.Warn("cannot restore IRQ affinity", zap.Int("irq", n), zap.String("name", o.name),
				zap.Stringer("mask", o.mask), zap.Stringer("kind", kind), zap.Error(err))
		}
		switch kind {
		case KindOK, KindVanished, KindManaged:
			delete(a.originals, n)
		}
	}
	a.restoreXPS(ctx, inv, &res)
	a.restoreNAPI(ctx, inv, &res)
	if res.Written > 0 || len(res.Failed) > 0 {
		a.log.Info("restored IRQ affinities found at start", zap.Int("written", res.Written),
			zap.Int("failed", len(res.Failed)))
	}
	return res
}
