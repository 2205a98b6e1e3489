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
		open     bool      // a burst is open
		lost     bool      // it lost events
		last     time.Time // when the debouncer last saw a hint
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
	// release lets the consumer take acc; w.mu is held.
	release := func() {
		if lost {
			w.acc.cached = false
		}
		w.released = true
		select {
		case w.ready <- struct{}{}:
		default:
		}
		if resyncC != nil {
			resync.Reset(w.opts.Resync)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-resyncC:
			w.hint(CauseResync, false, false)
		case <-loadC:
			w.Hint(CauseLoad)
		case <-w.wake:
			w.mu.Lock()
			if w.acc.Causes == nil {
				w.mu.Unlock()
				continue
			}
			last = time.Now()
			lost = lost || w.acc.Causes[CauseLost] > 0
			// A pci bind ends what the burst waits for: the driver
			// finished its probe and requested its IRQs.
			if !lost && (!open || w.end) {
				release()
			}
			w.end, open = false, true
			wait := w.opts.Window
			if !w.released {
				wait = min(wait, w.acc.First.Add(w.opts.MaxDelay).Sub(last))
			}
			w.mu.Unlock()
			deadline.Reset(wait)
		case <-deadline.C:
			w.mu.Lock()
			if w.acc.Causes != nil && !w.released {
				release()
			}
			w.mu.Unlock()
			// MaxDelay cut a burst still going: keep it open until it
			// has been quiet for Window.
			if rest := w.opts.Window - time.Since(last); rest > 0 {
				deadline.Reset(rest)
			} else {
				open, lost = false, false
			}
		}
	}
}
