package apply

import (
	"cmp"
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
	restoreAll(ctx, a.originals, cmp.Compare[int], func(n int, o original) (bool, bool) {
		if inv != nil {
			if q, ok := inv.IRQ(n); !ok || q.Name != o.name {
				return false, true
			}
		}
		w := policy.Write{Kind: policy.WriteIRQAffinity, IRQ: n, Name: o.name, After: o.mask}
		err := a.write(ctx, n, o.name, o.mask)
		kind := irqKinds.of(err)
		res.record(w, kind, errnoName(err))
		if kind.Failed() {
			a.log.Warn("cannot restore IRQ affinity", zap.Int("irq", n), zap.String("name", o.name),
				zap.Stringer("mask", o.mask), zap.Stringer("kind", kind), zap.Error(err))
		}
		return kind == KindOK, kind == KindOK || kind == KindVanished || kind == KindManaged
	})
	a.restoreXPS(ctx, inv, &res)
	a.restoreNAPI(ctx, inv, &res)
	if res.Written > 0 || len(res.Failed) > 0 {
		a.log.Info("restored IRQ affinities found at start", zap.Int("written", res.Written),
			zap.Int("failed", len(res.Failed)))
	}
	return res
}

// restoreAll calls put for originals' keys in order while ctx lives and
// forgets each key put reports done; it returns how many put wrote.
func restoreAll[K comparable, V any](ctx context.Context, originals map[K]V, order func(K, K) int,
	put func(K, V) (written, done bool)) int {
	n := 0
	for _, k := range slices.SortedFunc(maps.Keys(originals), order) {
		if ctx.Err() != nil {
			break
		}
		written, done := put(k, originals[k])
		if written {
			n++
		}
		if done {
			delete(originals, k)
		}
	}
	return n
}
