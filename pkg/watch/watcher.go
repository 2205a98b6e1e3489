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
// A hint that comes when no burst is open is emitted at once, so that
// one event costs no wait, and opens a burst. The hints that come while
// it is open are held and emitted together, in one more round that sees
// the burst's final state. Lost events (CauseLost) are always held, and
// make every trigger the burst emits after them Fresh.
type Options struct {
	// Window is the quiet time that ends a burst and emits the hints
	// held; more than 0.
	Window time.Duration
	// MaxDelay bounds the wait of a held hint, even if hints keep coming
	// (the burst then stays open); at least Window.
	MaxDelay time.Duration
	// Resync is the idle time after which a CauseResync Trigger is
	// emitted. Negative disables it; 0 is refused.
	Resync time.Duration
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

// Watcher turns kernel events and injected hints into coalesced
// Triggers. Create it with New before the initial full scan, so that no
// event between the scan and Run is lost (the kernel queues them).
type Watcher struct {
	opts Options
	out  chan Trigger
	wake chan struct{}

	uevents ueventSource
	links   linkSource
	ethtool ethtoolSource
	netdev  netdevSource

	started atomic.Bool

	mu         sync.Mutex
	pending    Trigger // hints not yet seen by the loop; nil Causes when none
	pendingEnd bool    // one of pending is a pci bind: emit the burst now
	stats      Stats
	degraded   []error
	absent     error // a source the kernel does not have (Absent)
	logged     map[string]bool
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
	case opts.ReceiveBuffer < 0:
		return nil, fmt.Errorf("watch: receive buffer %d is negative", opts.ReceiveBuffer)
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	w := &Watcher{
		opts:   opts,
		out:    make(chan Trigger, 1),
		wake:   make(chan struct{}, 1),
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

// Triggers returns the channel of coalesced triggers, closed when Run
// returns. The Watcher never blocks on it: while the consumer is busy,
// new hints merge into the one trigger waiting there.
func (w *Watcher) Triggers() <-chan Trigger { return w.out }

// Hint injects a hint with cause c, so that reloads enter the
// consumer's loop as kernel events do. It never blocks and is safe from
// any goroutine; hints after Run returned are ignored. Only CauseLink,
// CauseChannels and CauseNetdev keep the trigger from being Fresh: a
// CauseUevent given here names no subsystem.
func (w *Watcher) Hint(c Cause) {
	w.hint(c, c == CauseLink || c == CauseChannels || c == CauseNetdev, false)
}

// hint is Hint with what the sources know: whether the event leaves
// the consumer's caches valid, and whether it ends what a burst waits
// for (a pci bind: the driver finished its probe).
func (w *Watcher) hint(c Cause, cached, end bool) {
	now := time.Now()
	w.mu.Lock()
	if w.pending.Causes == nil {
		w.pending = Trigger{Causes: make(map[Cause]int), First: now, cached: true}
	}
	w.pending.Causes[c]++
	w.pending.cached = w.pending.cached && cached
	w.pendingEnd = w.pendingEnd || end
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

// Run pumps the sources and emits triggers until ctx is cancelled,
// then closes them and the Triggers channel. It may be called once.
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
	close(w.out)
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
