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
// A hint when no burst is open is released at once and opens a burst;
// hints while it is open are held and released together. The
// consumer's own hints (stale, load, verify) open no burst, so that
// they never delay an event. Lost events are always held, and make the
// burst's later triggers Fresh.
type Options struct {
	Window   time.Duration // quiet time that ends a burst; > 0
	MaxDelay time.Duration // bound on a held hint's wait; >= Window
	// Resync is the idle time before a CauseResync hint; negative: none.
	Resync        time.Duration
	Load          time.Duration                    // period of CauseLoad hints; 0: none
	ReceiveBuffer int                              // bytes; 0: DefaultReceiveBuffer
	Logf          func(format string, args ...any) // degradations, first drops
	// Uevents, Links, Ethtool and Netdev enable the sources.
	Uevents, Links, Ethtool, Netdev bool
}

// Watcher turns kernel events, timers and injected hints into one
// coalesced Trigger. Create it before the initial scan, so that the
// kernel queues the events in between.
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
	outside  bool      // a hint since the debouncer looked is not the consumer's own
	last     time.Time // when the last hint not the consumer's own came
	lost     bool      // the open burst lost events
	timers   map[Cause]*time.Timer
	stats    Stats
	degraded []error
	absent   error // a source the kernel does not have (Absent)
	logged   map[string]bool
}

// New validates opts and opens the enabled sources; one that cannot be
// opened is left out and reported through Degraded and Logf.
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

// openSource opens the source if enabled; nil when disabled or failed.
func openSource[T any](w *Watcher, enabled bool, name string, open func(rcvbuf int) (source[T], error)) source[T] {
	if !enabled {
		return nil
	}
	s, err := open(w.opts.ReceiveBuffer)
	switch {
	case err != nil && name == sourceNetdev && errors.Is(err, ErrNoFamily):
		// Before 6.3; rtnetlink and uevents announce the devices.
		w.absent = fmt.Errorf("watch: %s source: %w", name, err)
		return nil
	case err != nil:
		w.degrade(name, err)
		return nil
	}
	return s
}

// Absent returns why a source the kernel lacks (netdev before 6.3) was
// not opened; unlike Degraded, nothing is missed for it.
func (w *Watcher) Absent() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.absent
}

// Ready receives when a trigger is released for Take; Run closes it.
// While the consumer is busy, new hints join the trigger waiting.
func (w *Watcher) Ready() <-chan struct{} { return w.ready }

// Take returns the released trigger and empties the accumulator; false
// when none is released.
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

// Hint injects a hint with cause c; it never blocks and is safe from
// any goroutine. Only link, channel, netdev and the consumer's own
// causes keep the trigger from being Fresh.
func (w *Watcher) Hint(c Cause) {
	cached := c == CauseLink || c == CauseChannels || c == CauseNetdev || c >= CauseStale && c <= CauseVerify
	w.hint(c, cached, false)
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

// hint is Hint with what the sources know: whether caches stay valid,
// and whether it ends the burst's wait (a pci bind).
func (w *Watcher) hint(c Cause, cached, end bool) {
	now := time.Now()
	w.mu.Lock()
	if w.acc.Causes == nil {
		w.acc = Trigger{Causes: make(map[Cause]int), cached: true}
	}
	// The consumer's own hints (stale, load, verify) are no events:
	// they give no First, for event-to-applied, and open no burst.
	if c < CauseStale {
		if w.acc.First.IsZero() {
			w.acc.First = now
		}
		w.last, w.outside = now, true
	}
	w.acc.Causes[c]++
	w.acc.cached = w.acc.cached && cached
	w.end = w.end || end
	w.lost = w.lost || c == CauseLost
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Degraded joins the errors of the sources that failed; nil when all work.
func (w *Watcher) Degraded() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return errors.Join(w.degraded...)
}

// Run pumps the sources and releases triggers until ctx is cancelled,
// then closes them and Ready. It may be called once.
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
		wg.Go(func() { pump(w, sourceEthtool, w.ethtool, w.hints(CauseChannels), nil) })
	}
	if w.netdev != nil {
		wg.Go(func() { pump(w, sourceNetdev, w.netdev, w.hints(CauseNetdev), nil) })
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
