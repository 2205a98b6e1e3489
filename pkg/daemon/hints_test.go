package daemon

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/state"
	"github.com/numairqd/numairqd/pkg/watch"
)

// hints records what the loop asks the watcher for.
type hints struct {
	now   []watch.Cause
	after map[watch.Cause]time.Duration
}

func (h *hints) Hint(c watch.Cause) { h.now = append(h.now, c) }

func (h *hints) HintAfter(c watch.Cause, d time.Duration) {
	if h.after == nil {
		h.after = map[watch.Cause]time.Duration{}
	}
	h.after[c] = d
}

// take removes a hint c given now, and reports whether there was one.
func (h *hints) take(c watch.Cause) bool {
	i := slices.Index(h.now, c)
	if i < 0 {
		return false
	}
	h.now = slices.Delete(h.now, i, i+1)
	return true
}

// Round is round planning with the latest loads.
func (d *Daemon) Round(ctx context.Context, trigger string, least inventory.Depth, first time.Time) (*state.State, error) {
	return d.round(ctx, trigger, least, first, d.balancing())
}

// loadTick takes a load trigger as the loop would, and the load round
// it asks for when it takes a proposal.
func (d *Daemon) loadTick(t *testing.T, ctx context.Context) {
	t.Helper()
	h := &hints{}
	d.take(ctx, h, trigger(t, watch.CauseLoad))
	if h.take(watch.CauseLoad) {
		d.take(ctx, h, trigger(t, watch.CauseLoad))
	}
}

// trigger is the trigger a watcher releases for one hint c.
func trigger(t *testing.T, c watch.Cause) watch.Trigger {
	t.Helper()
	w, err := watch.New(watch.Options{Window: time.Millisecond, MaxDelay: time.Millisecond, Resync: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	w.Hint(c)
	for range w.Ready() {
		if tr, ok := w.Take(); ok {
			return tr
		}
	}
	t.Fatal("the watcher stopped")
	return watch.Trigger{}
}
