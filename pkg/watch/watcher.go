//go:build linux

package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Watcher; the durations have no defaults.
//
// A hint that comes when no burst is open is released at once, so that
// one event costs no wait, and opens a burst. The hints that come while
// it is open are held and released together, for one more round that
// sees the burst's final state. Lost events (CauseLost) are always held,
// and make every trigger the burst releases after them Fresh.
type Options struct {
	// Window is the quiet time that ends a burst and releases the
	// hints held; more than 0.
	Window time.Duration
	// MaxDelay bounds the wait of a held hint, even if hints keep coming
	// (the burst then stays open); at least Window.
	MaxDelay time.Duration
	// Resync is the idle time after which a CauseResync hint is given.
	// Negative disables it; 0 is refused.
	Resync time.Duration
	// Load is the period of the CauseLoad hints; 0 gives none.
	Load time.Duration
	// Uevents, Links, Ethtool and Netdev enable the sources; Netdev is
	// the netdev family's "mgmt" group (Linux 6.3+).
	Uevents, Links, Ethtool, Netdev bool
	// ReceiveBuffer is the sockets' receive buffer in bytes; 0 means
	// DefaultReceiveBuffer.
	ReceiveBuffer int
	// Logf, if set, receives degradations and the first dropped or
	// malformed message of each source.
	Logf func(format string, args ...any)
}

// Watcher turns kernel events, its timers and injected hints into one
// coalesced Trigger the consumer takes. Create it with New before the
// initial full scan, so that no event between the scan and Run is lost
// (the kernel queues them).
type Watcher struct {
	opts  Options
	ready chan struct{} // a released trigger waits in acc; closed by Run
	wake  chan struct{} // a hint came: the debouncer looks at acc

	uevents ueventSource
	links   linkSource
	ethtool ethtoolSource
	netdev  netdevSource

	started atomic.Bool

	mu       sync.Mutex
	acc      Trigger   // every hint the consumer has not taken; nil Causes when none
	released bool      // the debouncer let the consumer take acc
	end      bool      // a hint since the debouncer looked is a pci bind
	last     time.Time // when the last hint came
	lost     bool      // the open burst lost events
	timers   map[Cause]*time.Timer
	stats    Stats
	degraded []error
	absent   error // a source the kernel does not have (Absent)
	logged   map[string]bool
}

// New validates opts and opens the enabled sources. New fails only on
// invalid options: the Watcher runs without a source that cannot be
// opened, and reports it through Degraded and Logf.
func New(opts Options) (*Watcher, error) {
	return newWatcher(opts, openers{listen(ListenUevents), listen(ListenLinks), listen(ListenEthtool), listen(ListenNetdev)})
}

func newWatcher(opts Options, open openers) (*Watcher, error) {
	switch {
	case opts.Window <= 0:
		return nil, fmt.Errorf("watch: window %v: want more than 0", opts.Window)
	case opts.MaxDelay < opts.Window:
		return nil, fmt.Errorf("watch: max delay %v is shorter than window %v", opts.MaxDelay, opts.Window)
	case opts.Resync == 0:
		return nil, errors.New("watch: resync 0s: want more than 0, or negative for none")
	case opts.Load < 0:
		return nil, fmt.Errorf("watch: load interval %v is negative", opts.Load)
	case opts.ReceiveBuffer < 0:
		return nil, fmt.Errorf("watch: receive buffer %d is negative", opts.ReceiveBuffer)
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	w := &Watcher{
		opts:   opts,
		ready:  make(chan struct{}, 1),
		wake:   make(chan struct{}, 1),
		timers: make(map[Cause]*time.Timer),
		stats:  newStats(),
		logged: make(map[string]bool),
	}
	w.uevents = openSource(w, opts.Uevents, sourceUevent, open.uevents)
	w.links = openSource(w, opts.Links, sourceRtnetlink, open.links)
	w.ethtool = openSource(w, opts.Ethtool, sourceEthtool, open.ethtool)
	w.netdev = openSource(w, opts.Netdev, sourceNetdev, open.netdev)
	return w, nil
}

// openSource opens the source if it is enabled; one that cannot be
// opened degrades the Watcher and is nil.
func openSource[T any](w *Watcher, enabled bool, name string, open func(rcvbuf int) (source[T], error)) source[T] {
	if !enabled {
		return nil
	}
	s, err := open(w.opts.ReceiveBuffer)
	switch {
	case err != nil && name == sourceNetdev && errors.Is(err, ErrNoFamily):
		// Before 6.3 the kernel has no netdev family: no events are
		// missed, as rtnetlink and uevents announce its devices.
		w.absent = fmt.Errorf("watch: %s source: %w", name, err)
		return nil
	case err != nil:
		w.degrade(name, err)
		return nil
	}
	return s
}

// Absent returns why a source the kernel does not have (the netdev
// family before 6.3) was not opened, nil when none: unlike Degraded,
// nothing is missed for it.
func (w *Watcher) Absent() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.absent
}

// Ready receives when a trigger is released for Take; it is closed when
// Run returns. The Watcher never blocks on it: while the consumer is
// busy, new hints join the trigger waiting.
func (w *Watcher) Ready() <-chan struct{} { return w.ready }

// Take returns the released trigger and empties the accumulator; false
// when none is released (a Ready that another Take answered).
func (w *Watcher) Take() (Trigger, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.released || w.acc.Causes == nil {
		return Trigger{}, false
	}
	t := w.acc
	w.acc, w.released = Trigger{}, false
	return t, true
}

// Hint injects a hint with cause c, so that reloads and the consumer's
// own rounds enter its loop as kernel events do. It never blocks and is
// safe from any goroutine; hints after Run returned are ignored. Only
// CauseLink, CauseChannels, CauseNetdev and the consumer's own causes
// keep the trigger from being Fresh: a CauseUevent given here names no
// subsystem.
func (w *Watcher) Hint(c Cause) {
	switch c {
	case CauseLink, CauseChannels, CauseNetdev, CauseStale, CauseLoad, CauseVerify:
		w.hint(c, true, false)
	default:
		w.hint(c, false, false)
	}
}

// HintAfter gives the hint c after d, replacing one of c not given yet.
func (w *Watcher) HintAfter(c Cause, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t := w.timers[c]; t != nil {
		t.Reset(d)
		return
	}
	w.timers[c] = time.AfterFunc(d, func() { w.Hint(c) })
}

// hint is Hint with what the sources know: whether the event leaves
// the consumer's caches valid, and whether it ends what a burst waits
// for (a pci bind: the driver finished its probe).
func (w *Watcher) hint(c Cause, cached, end bool) {
	now := time.Now()
	w.mu.Lock()
	if w.acc.Causes == nil {
		w.acc = Trigger{Causes: make(map[Cause]int), First: now, cached: true}
	}
	w.acc.Causes[c]++
	w.acc.cached = w.acc.cached && cached
	w.end = w.end || end
	w.last = now
	w.lost = w.lost || c == CauseLost
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Degraded returns the errors of the sources that could not be opened
// or failed, joined; nil when every enabled source works.
func (w *Watcher) Degraded() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return errors.Join(w.degraded...)
}

// Run pumps the sources and releases triggers until ctx is cancelled,
// then closes them and the Ready channel. It may be called once.
func (w *Watcher) Run(ctx context.Context) error {
	if w.started.Swap(true) {
		return errors.New("watch: Run called twice")
	}
	var wg sync.WaitGroup
	if w.uevents != nil {
		wg.Go(func() { pump(w, sourceUevent, w.uevents, w.onUevent, nil) })
	}
	if w.links != nil {
		handle, lost := w.onLinks()
		wg.Go(func() { pump(w, sourceRtnetlink, w.links, handle, lost) })
	}
	if w.ethtool != nil {
		wg.Go(func() { pump(w, sourceEthtool, w.ethtool, w.onChannels, nil) })
	}
	if w.netdev != nil {
		wg.Go(func() { pump(w, sourceNetdev, w.netdev, w.onDevs, nil) })
	}
	w.loop(ctx)
	w.Close()
	wg.Wait()
	w.mu.Lock()
	for _, t := range w.timers {
		t.Stop()
	}
	w.mu.Unlock()
	close(w.ready)
	return nil
}

// Close closes the sources, for a Watcher that will never Run.
func (w *Watcher) Close() error {
	var errs []error
	for _, s := range []io.Closer{w.uevents, w.links, w.ethtool, w.netdev} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}
