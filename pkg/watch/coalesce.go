//go:build linux

package watch

import (
	"context"
	"time"
)

// loop is the debouncer of Options: it decides when the consumer may
// take the accumulator, and gives the resync and load hints. Lost
// events are held because after an overflow the kernel drops further
// messages without a word until the queue is drained
// (netlink_broadcast_deliver refuses a congested socket): only a full
// read after the burst has gone quiet sees them.
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
	// release lets the consumer take acc; w.mu is held. The resync
	// waits for an idle machine: the consumer's own causes do not delay
	// it.
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
			// Armed again at once: a release may not follow, when the
			// hint joins a trigger released already.
			resync.Reset(w.opts.Resync)
			w.hint(CauseResync, false, false)
		case <-loadC:
			w.Hint(CauseLoad)
		case <-w.wake:
			w.mu.Lock()
			if w.acc.Causes == nil {
				w.mu.Unlock()
				continue
			}
			// A pci bind ends what the burst waits for: the driver
			// finished its probe and requested its IRQs.
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
			// MaxDelay cut a burst still going: keep it open until it
			// has been quiet for Window.
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
