//go:build linux

package watch

import (
	"context"
	"time"
)

// loop is the debouncer of Options and gives the resync and load hints.
// Lost events are held: after an overflow the kernel drops messages
// silently until the queue drains, so only a read after the burst sees
// them.
func (w *Watcher) loop(ctx context.Context) {
	var (
		open     bool // a burst is open
		deadline = time.NewTimer(time.Hour)
		resync   = time.NewTimer(time.Hour)
		resyncC  <-chan time.Time
		loadC    <-chan time.Time
	)
	deadline.Stop()
	defer deadline.Stop()
	defer resync.Stop()
	if w.opts.Resync > 0 {
		resync.Reset(w.opts.Resync)
		resyncC = resync.C
	}
	if w.opts.Load > 0 {
		load := time.NewTicker(w.opts.Load)
		defer load.Stop()
		loadC = load.C
	}
	// release lets the consumer take acc; w.mu is held. Only external
	// causes delay the resync.
	release := func() {
		if w.lost {
			w.acc.cached = false
		}
		w.released = true
		select {
		case w.ready <- struct{}{}:
		default:
		}
		for c := range w.acc.Causes {
			if resyncC != nil && c < CauseStale {
				resync.Reset(w.opts.Resync)
				break
			}
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-resyncC:
			// Re-armed here: the hint may join a released trigger.
			resync.Reset(w.opts.Resync)
			w.hint(CauseResync, false, false)
		case <-loadC:
			w.Hint(CauseLoad)
		case <-w.wake:
			w.mu.Lock()
			outside := w.outside
			w.outside = false
			if w.acc.Causes == nil || !outside {
				// The consumer's own hints alone go at once when no
				// burst is open and wait with one; they open none.
				if w.acc.Causes != nil && !open {
					release()
				}
				w.mu.Unlock()
				continue
			}
			// A pci bind ends the burst's wait: the probe is done.
			if !w.lost && (!open || w.end) {
				release()
			}
			w.end, open = false, true
			wait := w.opts.Window
			if !w.released {
				wait = min(wait, w.acc.First.Add(w.opts.MaxDelay).Sub(w.last))
			}
			w.mu.Unlock()
			deadline.Reset(wait)
		case <-deadline.C:
			w.mu.Lock()
			if w.acc.Causes != nil && !w.released {
				release()
			}
			// After a MaxDelay release, stay open until Window quiet.
			rest := w.opts.Window - time.Since(w.last)
			if rest <= 0 {
				open, w.lost = false, false
			}
			w.mu.Unlock()
			if rest > 0 {
				deadline.Reset(rest)
			}
		}
	}
}
