package apply

import (
	"context"
	"maps"
	"slices"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/policy"
)

// Restore writes back what Apply first changed (restore_on_exit): the
// masks of IRQs inv (nil: any) lists under the same name, then the XPS
// maps and NAPI kthreads' CPUs. What was restored or vanished is
// forgotten, so a second Restore only retries the failures.
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
