//go:build linux

package watch

import (
	"context"
	"time"
)

// loop is the debouncer of Options. Lost events are held because after
// an overflow the kernel drops further messages without a word until
// the queue is drained (netlink_broadcast_deliver refuses a congested
// socket): only a full read after the burst has gone quiet sees them.
func (w *Watcher) loop(ctx context.Context) {
	var (
		open     bool      // a burst is open
		lost     bool      // it lost events
		last     time.Time // when the loop took its last hint
		burst    Trigger   // its hints not emitted yet; nil Causes when none
		deadline = time.NewTimer(time.Hour)
		resync   *time.Timer
		resyncC  <-chan time.Time
	)
	deadline.Stop()
	defer deadline.Stop()
	if w.opts.Resync > 0 {
		resync = time.NewTimer(w.opts.Resync)
		defer resync.Stop()
		resyncC = resync.C
	}
	send := func(t Trigger) {
		w.emit(t)
		if resync != nil {
			resync.Reset(w.opts.Resync)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-resyncC:
			w.Hint(CauseResync)
		case <-w.wake:
			w.mu.Lock()
			in, end := w.pending, w.pendingEnd
			w.pending, w.pendingEnd = Trigger{}, false
			w.mu.Unlock()
			if in.Causes == nil {
				continue
			}
			last = time.Now()
			lost = lost || in.Causes[CauseLost] > 0
			if open || lost {
				burst.merge(in)
			} else {
				send(in)
			}
			open = true
			if end && !lost && burst.Causes != nil {
				// A driver finished its probe: its IRQs are requested,
				// so what the burst waited for is there. Later hints
				// are coalesced as before.
				send(burst)
				burst = Trigger{}
			}
			wait := w.opts.Window
			if burst.Causes != nil {
				wait = min(wait, burst.First.Add(w.opts.MaxDelay).Sub(last))
			}
			deadline.Reset(wait)
		case <-deadline.C:
			if burst.Causes != nil {
				if lost {
					burst.cached = false
				}
				send(burst)
				burst = Trigger{}
			}
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

// emit hands t to the consumer without blocking: if the consumer has
// not taken the previous trigger yet, t is merged into it.
func (w *Watcher) emit(t Trigger) {
	for {
		select {
		case w.out <- t:
			return
		default:
		}
		select {
		case old := <-w.out:
			t.merge(old)
		default:
		}
	}
}
