package watch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for the zero values of Options.
const (
	DefaultWindow   = 100 * time.Millisecond
	DefaultMaxDelay = 500 * time.Millisecond
	DefaultResync   = 60 * time.Second
)

// Trigger reasons that do not come from a uevent ("subsystem/action").
const (
	ReasonLink      = "link"      // an rtnetlink link appeared, went, was renamed or changed IFF_UP
	ReasonOverflow  = "overflow"  // a receive queue overflowed: events were lost
	ReasonTruncated = "truncated" // a kernel message did not fit the buffer
	ReasonResync    = "resync"    // the periodic safety-net rescan
	ReasonDegraded  = "degraded"  // a source failed while running
)

// Options configure a Watcher. Zero durations take the defaults.
type Options struct {
	// Window is the quiet time that ends a burst: a Trigger is emitted
	// once no hint has arrived for Window.
	Window time.Duration
	// MaxDelay bounds a burst: a Trigger is emitted at most MaxDelay
	// after its first hint, even if hints keep coming.
	MaxDelay time.Duration
	// Resync is the idle time after which a "resync" Trigger is
	// emitted: the state is re-read at least this often. Negative
	// disables it.
	Resync time.Duration
	// Uevents and Links enable the kernel uevent and rtnetlink link
	// sources.
	Uevents, Links bool
	// ReceiveBuffer is the sockets' receive buffer in bytes; 0 means
	// DefaultReceiveBuffer.
	ReceiveBuffer int
	// Logf, if set, receives degradations and the first dropped or
	// malformed message of each source.
	Logf func(format string, args ...any)
}

// Trigger tells the consumer to re-read the whole state.
type Trigger struct {
	// Reasons counts the hints merged into this trigger by reason:
	// "cpu/offline", "pci/bind", "link", "overflow", "resync", or any
	// reason given to Hint.
	Reasons map[string]int
	// First is when the first of those hints arrived, for measuring
	// event-to-applied latency.
	First time.Time
}

// Stats is a snapshot of the Watcher's counters, for metrics.
type Stats struct {
	// Hints counts hints by reason, as they appear in Trigger.Reasons.
	Hints map[string]uint64
	// Ignored counts trusted messages that cannot move IRQs: uevents
	// that are not Interesting, link messages that change neither
	// IFF_UP nor the name.
	Ignored uint64
	// Dropped counts messages not sent by the kernel.
	Dropped uint64
	// Malformed counts kernel messages that did not parse or were
	// truncated.
	Malformed uint64
	// Overflows counts receive queue overflows (ENOBUFS).
	Overflows uint64
	// Triggers counts bursts emitted; Merged those of them that were
	// merged into a trigger the consumer had not taken yet.
	Triggers, Merged uint64
	// Degraded maps a source ("uevent", "rtnetlink") that could not be
	// opened or failed to its error; the Watcher goes on without it.
	Degraded map[string]string
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

	started atomic.Bool

	mu        sync.Mutex
	pending   map[string]int // hints not yet seen by the loop
	firstHint time.Time      // arrival of the first of pending
	stats     Stats
	degraded  []error
	logged    map[string]bool
}

type ueventSource interface {
	Receive() (Uevent, error)
	Close() error
}

type linkSource interface {
	Receive() ([]LinkEvent, error)
	Close() error
}

// New validates opts and opens the enabled sources. A source that
// cannot be opened (no permission, no netlink) does not fail New: the
// Watcher runs without it and reports it through Degraded, Stats and
// Logf. New fails only on invalid options.
func New(opts Options) (*Watcher, error) {
	return newWatcher(opts, openUevents, openLinks)
}

func newWatcher(opts Options, openU func(int) (ueventSource, error), openL func(int) (linkSource, error)) (*Watcher, error) {
	if opts.Window == 0 {
		opts.Window = DefaultWindow
	}
	if opts.MaxDelay == 0 {
		opts.MaxDelay = DefaultMaxDelay
	}
	if opts.Resync == 0 {
		opts.Resync = DefaultResync
	}
	switch {
	case opts.Window < 0:
		return nil, fmt.Errorf("watch: window %v is negative", opts.Window)
	case opts.MaxDelay < opts.Window:
		return nil, fmt.Errorf("watch: max delay %v is shorter than window %v", opts.MaxDelay, opts.Window)
	case opts.ReceiveBuffer < 0:
		return nil, fmt.Errorf("watch: receive buffer %d is negative", opts.ReceiveBuffer)
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	w := &Watcher{
		opts:    opts,
		out:     make(chan Trigger, 1),
		wake:    make(chan struct{}, 1),
		pending: make(map[string]int),
		stats:   Stats{Hints: make(map[string]uint64), Degraded: make(map[string]string)},
		logged:  make(map[string]bool),
	}
	if opts.Uevents {
		s, err := openU(opts.ReceiveBuffer)
		if err != nil {
			w.degrade("uevent", err)
		} else {
			w.uevents = s
		}
	}
	if opts.Links {
		s, err := openL(opts.ReceiveBuffer)
		if err != nil {
			w.degrade("rtnetlink", err)
		} else {
			w.links = s
		}
	}
	return w, nil
}

// Triggers returns the channel of coalesced triggers. It has capacity
// 1 and the Watcher never blocks on it: while the consumer is busy, new
// hints merge into the trigger waiting there. It is closed when Run
// returns.
func (w *Watcher) Triggers() <-chan Trigger { return w.out }

// Hint injects a hint with the given reason (e.g. "sighup"). It never
// blocks and is safe from any goroutine; hints given before Run are
// kept, those after Run returned are ignored.
func (w *Watcher) Hint(reason string) {
	now := time.Now()
	w.mu.Lock()
	if len(w.pending) == 0 {
		w.firstHint = now
	}
	w.pending[reason]++
	w.stats.Hints[reason]++
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Degraded returns the errors of the sources that could not be opened
// or failed while running, joined; nil when every enabled source works.
func (w *Watcher) Degraded() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return errors.Join(w.degraded...)
}

// Stats returns a snapshot of the counters.
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Hints = maps.Clone(w.stats.Hints)
	s.Degraded = maps.Clone(w.stats.Degraded)
	return s
}

// Run pumps the sources and emits triggers until ctx is cancelled,
// then closes the sources and the Triggers channel and returns nil.
// It may be called once.
func (w *Watcher) Run(ctx context.Context) error {
	if w.started.Swap(true) {
		return errors.New("watch: Run called twice")
	}
	var wg sync.WaitGroup
	if w.uevents != nil {
		wg.Go(func() { w.pumpUevents(w.uevents) })
	}
	if w.links != nil {
		wg.Go(func() { w.pumpLinks(w.links) })
	}
	w.loop(ctx)
	w.Close()
	wg.Wait()
	close(w.out)
	return nil
}

// Close closes the sources. Run does it when it returns; call Close
// only for a Watcher that will never Run.
func (w *Watcher) Close() error {
	var errs []error
	if w.uevents != nil {
		errs = append(errs, w.uevents.Close())
	}
	if w.links != nil {
		errs = append(errs, w.links.Close())
	}
	return errors.Join(errs...)
}

// loop is the debouncer: it collects hints into a burst and emits the
// burst Window after its last hint, or MaxDelay after its first.
func (w *Watcher) loop(ctx context.Context) {
	var (
		burst    map[string]int
		first    time.Time
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
	for {
		select {
		case <-ctx.Done():
			return
		case <-resyncC:
			w.Hint(ReasonResync)
		case <-w.wake:
			w.mu.Lock()
			in, inFirst := w.pending, w.firstHint
			w.pending = make(map[string]int)
			w.mu.Unlock()
			if len(in) == 0 {
				continue
			}
			if burst == nil {
				burst, first = in, inFirst
			} else {
				mergeReasons(burst, in)
			}
			now := time.Now()
			deadline.Reset(min(w.opts.Window, first.Add(w.opts.MaxDelay).Sub(now)))
		case <-deadline.C:
			w.emit(Trigger{Reasons: burst, First: first})
			burst = nil
			if resync != nil {
				resync.Reset(w.opts.Resync)
			}
		}
	}
}

// emit hands t to the consumer without blocking: if the consumer has
// not taken the previous trigger yet, t is merged into it.
func (w *Watcher) emit(t Trigger) {
	merged := false
	for {
		select {
		case w.out <- t:
			w.mu.Lock()
			w.stats.Triggers++
			if merged {
				w.stats.Merged++
			}
			w.mu.Unlock()
			return
		default:
		}
		select {
		case old := <-w.out:
			mergeReasons(t.Reasons, old.Reasons)
			if old.First.Before(t.First) {
				t.First = old.First
			}
			merged = true
		default:
		}
	}
}

func mergeReasons(dst, src map[string]int) {
	for k, v := range src {
		dst[k] += v
	}
}

func (w *Watcher) pumpUevents(s ueventSource) {
	for {
		u, err := s.Receive()
		if err != nil {
			if w.sourceError("uevent", err) {
				return
			}
			continue
		}
		if !Interesting(u) {
			w.count(&w.stats.Ignored)
			continue
		}
		w.Hint(u.Reason())
	}
}

func (w *Watcher) pumpLinks(s linkSource) {
	// seen is the last IFF_UP and name per ifindex, so that carrier and
	// statistics changes, which cannot move IRQs, are not hints.
	seen := make(map[int]LinkEvent)
	for {
		evs, err := s.Receive()
		if errors.Is(err, ErrOverflow) {
			clear(seen) // transitions were lost: trust nothing
		}
		if err != nil {
			if w.sourceError("rtnetlink", err) {
				return
			}
			continue
		}
		for _, ev := range evs {
			if linkChanged(seen, ev) {
				w.Hint(ReasonLink)
			} else {
				w.count(&w.stats.Ignored)
			}
		}
	}
}

// linkChanged records ev in seen and reports whether it can matter: a
// link not seen before, deleted, renamed, or with IFF_UP changed.
func linkChanged(seen map[int]LinkEvent, ev LinkEvent) bool {
	if ev.Deleted {
		delete(seen, ev.Index)
		return true
	}
	old, ok := seen[ev.Index]
	seen[ev.Index] = ev
	return !ok || old.Up != ev.Up || old.Name != ev.Name
}

// sourceError accounts for a receive error and reports whether the
// source must stop: after Close, or on an error other than the
// per-message ones.
func (w *Watcher) sourceError(source string, err error) (stop bool) {
	switch {
	case errors.Is(err, os.ErrClosed):
		return true
	case errors.Is(err, ErrOverflow):
		w.count(&w.stats.Overflows)
		w.Hint(ReasonOverflow)
	case errors.Is(err, ErrNotKernel):
		w.count(&w.stats.Dropped)
		w.logOnce(source+"/dropped", "watch: %s: dropped message: %v (further ones are only counted)", source, err)
	case errors.Is(err, ErrTruncated):
		w.count(&w.stats.Malformed)
		w.logOnce(source+"/truncated", "watch: %s: %v (further ones are only counted)", source, err)
		w.Hint(ReasonTruncated)
	case errors.Is(err, ErrMalformed), errors.Is(err, ErrLibudev):
		w.count(&w.stats.Malformed)
		w.logOnce(source+"/malformed", "watch: %s: dropped message: %v (further ones are only counted)", source, err)
	default:
		w.degrade(source, err)
		w.Hint(ReasonDegraded)
		return true
	}
	return false
}

func (w *Watcher) count(c *uint64) {
	w.mu.Lock()
	*c++
	w.mu.Unlock()
}

func (w *Watcher) degrade(source string, err error) {
	w.mu.Lock()
	w.degraded = append(w.degraded, fmt.Errorf("watch: %s source: %w", source, err))
	w.stats.Degraded[source] = err.Error()
	w.mu.Unlock()
	w.opts.Logf("watch: %s source disabled, relying on resync and hints: %v", source, err)
}

func (w *Watcher) logOnce(key, format string, args ...any) {
	w.mu.Lock()
	done := w.logged[key]
	w.logged[key] = true
	w.mu.Unlock()
	if !done {
		w.opts.Logf(format, args...)
	}
}
