package watch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// Defaults for the zero values of Options.
const (
	DefaultWindow   = 100 * time.Millisecond
	DefaultMaxDelay = 500 * time.Millisecond
	DefaultResync   = 60 * time.Second
)

// Cause is why the watcher asks for a rescan.
type Cause uint8

const (
	CauseUevent   Cause = iota // an interesting kernel uevent (cpu/online, pci/bind, ...)
	CauseLink                  // an rtnetlink link appeared, went, was renamed or changed IFF_UP
	CauseLost                  // events were lost: a receive queue overflowed, a message was truncated, or a source failed
	CauseResync                // the periodic safety-net rescan
	CauseSIGHUP                // a reload asked for with SIGHUP
	CauseConfig                // the config file changed
	CauseChannels              // a NIC's channel count changed (ethtool -L)
	CauseBans                  // irqbalance's environment file changed (cri-o, tuned)
	numCauses
)

// causeNames are metric label values: keep them stable.
var causeNames = [numCauses]string{
	CauseUevent:   "uevent",
	CauseLink:     "link",
	CauseLost:     "overflow",
	CauseResync:   "resync",
	CauseSIGHUP:   "sighup",
	CauseConfig:   "config",
	CauseChannels: "channels",
	CauseBans:     "bans",
}

// String returns the cause's metric label: "uevent", "link",
// "overflow" (for CauseLost), "resync", "sighup", "config",
// "channels" or "bans".
func (c Cause) String() string {
	if c < numCauses {
		return causeNames[c]
	}
	return fmt.Sprintf("Cause(%d)", uint8(c))
}

// Causes returns every Cause, in order.
func Causes() []Cause {
	cs := make([]Cause, numCauses)
	for i := range cs {
		cs[i] = Cause(i)
	}
	return cs
}

// labelOrder is the precedence of Trigger.Label: a reload first, then
// lost events (everything must be re-read), then what the kernel said,
// the more specific first: a channel change before the link events a
// driver may send while it restarts its queues.
var labelOrder = [...]Cause{CauseSIGHUP, CauseConfig, CauseBans, CauseLost, CauseUevent, CauseChannels, CauseLink, CauseResync}

// UeventKind is a uevent's subsystem and action.
type UeventKind struct{ Subsystem, Action string }

// Dropped and Overflows keys of Stats.
const (
	dropNotKernel   = "not_kernel"
	dropMalformed   = "malformed"
	sourceUevent    = "uevent"
	sourceRtnetlink = "rtnetlink"
	sourceEthtool   = "ethtool"
)

// Options configure a Watcher. Zero durations take the defaults.
//
// A hint that comes when no burst is open is emitted at once, so that
// one event costs one round and no wait, and it opens a burst. The
// hints that come while the burst is open are held and emitted
// together, so that a burst costs one more round, at its end, which
// sees its final state. Lost events (CauseLost) are always held: the
// kernel keeps dropping messages until the queue is drained, so a round
// at once could miss what they said.
type Options struct {
	// Window is the quiet time that ends a burst: the hints held are
	// emitted, and the burst closes, once no hint has come for Window.
	Window time.Duration
	// MaxDelay bounds the wait of a held hint: the hints held are
	// emitted at most MaxDelay after the first of them, even if hints
	// keep coming (the burst then stays open).
	MaxDelay time.Duration
	// Resync is the idle time after which a CauseResync Trigger is
	// emitted: the state is re-read at least this often. Negative
	// disables it.
	Resync time.Duration
	// Uevents and Links enable the kernel uevent and rtnetlink link
	// sources, Ethtool the ethtool monitor (channel changes).
	Uevents, Links, Ethtool bool
	// ReceiveBuffer is the sockets' receive buffer in bytes; 0 means
	// DefaultReceiveBuffer.
	ReceiveBuffer int
	// Logf, if set, receives degradations and the first dropped or
	// malformed message of each source.
	Logf func(format string, args ...any)
}

// Trigger tells the consumer that the state may have changed and how
// much of it to re-read.
type Trigger struct {
	// Causes counts the hints merged into this trigger, by cause: the
	// first hint of a burst alone, the rest of the burst together, or
	// more merged while the consumer was busy.
	Causes map[Cause]int
	// First is when the earliest of those hints arrived, for measuring
	// event-to-applied latency.
	First time.Time
	// Scope is the widest scope of the hints merged into this trigger:
	// cpu, node and memory uevents ask for ScopeCPU, pci and net
	// uevents, link events and channel changes for ScopeDevices,
	// anything else for ScopeAll. Every trigger a burst emits after it
	// lost events is ScopeAll too (see Options). The zero value is
	// ScopeAll.
	Scope Scope
	// Devices are the PCI addresses ("0000:41:00.0") that the merged
	// pci uevents name, sorted and unique, so that the consumer forgets
	// what it cached about them: a freed and re-requested IRQ must not
	// be mistaken for the old one. It is not every device that changed
	// (net uevents and link events name none) and is nil at ScopeAll,
	// where nothing cached is trusted. Past 256 (maxDevices) addresses the
	// list is dropped and the trigger widened to ScopeAll, which bounds
	// a burst's memory.
	Devices []string
}

// maxDevices bounds Trigger.Devices.
const maxDevices = 256

// Reload reports whether the trigger asks for the config to be re-read
// (CauseSIGHUP or CauseConfig).
func (t Trigger) Reload() bool {
	return t.Causes[CauseSIGHUP] > 0 || t.Causes[CauseConfig] > 0
}

// Label is the one cause that names the round in metrics, by
// precedence: "sighup", "config", "bans", "overflow" (CauseLost), "uevent",
// "channels", "link", "resync". A trigger without causes is labelled
// "resync".
func (t Trigger) Label() string {
	for _, c := range labelOrder {
		if t.Causes[c] > 0 {
			return c.String()
		}
	}
	return CauseResync.String()
}

// Stats are the Watcher's cumulative counters, read at scrape time.
// Every key that can appear is present from New on, at zero until
// counted, so that a scrape shows every series from the start.
type Stats struct {
	// Uevents counts the interesting uevents received, by kind. The
	// kinds are those Interesting accepts, a fixed set.
	Uevents map[UeventKind]uint64
	// Dropped counts messages discarded, by reason: "not_kernel" (sent
	// by a process, not the kernel) and "malformed" (did not parse, or
	// truncated).
	Dropped map[string]uint64
	// Overflows counts receive queue overflows (ENOBUFS), by source:
	// "uevent", "rtnetlink" or "ethtool".
	Overflows map[string]uint64
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

	started atomic.Bool

	mu         sync.Mutex
	pending    Trigger // hints not yet seen by the loop; nil Causes when none
	pendingEnd bool    // one of pending is a pci bind: emit the burst now
	stats      Stats
	degraded   []error
	logged     map[string]bool
}

type ueventSource interface {
	Receive() (Uevent, error)
	Close() error
}

type linkSource interface {
	Receive() ([]LinkEvent, error)
	Close() error
}

type ethtoolSource interface {
	Receive() ([]ChannelsEvent, error)
	Close() error
}

// openers open the sources; tests give fakes.
type openers struct {
	uevents func(rcvbuf int) (ueventSource, error)
	links   func(rcvbuf int) (linkSource, error)
	ethtool func(rcvbuf int) (ethtoolSource, error)
}

// New validates opts and opens the enabled sources. A source that
// cannot be opened (no permission, no netlink) does not fail New: the
// Watcher runs without it and reports it through Degraded and Logf. New fails only on invalid options.
func New(opts Options) (*Watcher, error) {
	return newWatcher(opts, openers{openUevents, openLinks, openEthtool})
}

func newWatcher(opts Options, open openers) (*Watcher, error) {
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
		opts:   opts,
		out:    make(chan Trigger, 1),
		wake:   make(chan struct{}, 1),
		stats:  newStats(),
		logged: make(map[string]bool),
	}
	if opts.Uevents {
		s, err := open.uevents(opts.ReceiveBuffer)
		if err != nil {
			w.degrade(sourceUevent, err)
		} else {
			w.uevents = s
		}
	}
	if opts.Links {
		s, err := open.links(opts.ReceiveBuffer)
		if err != nil {
			w.degrade(sourceRtnetlink, err)
		} else {
			w.links = s
		}
	}
	if opts.Ethtool {
		s, err := open.ethtool(opts.ReceiveBuffer)
		if err != nil {
			w.degrade(sourceEthtool, err)
		} else {
			w.ethtool = s
		}
	}
	return w, nil
}

// Triggers returns the channel of coalesced triggers. It has capacity
// 1 and the Watcher never blocks on it: while the consumer is busy, new
// hints merge into the trigger waiting there. It is closed when Run
// returns.
func (w *Watcher) Triggers() <-chan Trigger { return w.out }

// Hint injects a hint with cause c (CauseSIGHUP, CauseConfig, ...), so
// that reloads enter the consumer's loop as kernel events do. It never
// blocks and is safe from any goroutine; hints given before Run are
// kept, those after Run returned are ignored. Its scope is ScopeDevices
// for CauseLink and CauseChannels and ScopeAll for every other cause: a
// CauseUevent given here names no subsystem.
func (w *Watcher) Hint(c Cause) { w.hint(c, causeScope(c), "", false) }

// hint is Hint with what the sources know from the event: its scope,
// the PCI address it names, or "", and whether it ends what a burst is
// waiting for (a pci bind: the driver finished its probe).
func (w *Watcher) hint(c Cause, s Scope, device string, end bool) {
	now := time.Now()
	w.mu.Lock()
	if w.pending.Causes == nil {
		w.pending = Trigger{Causes: make(map[Cause]int), First: now, Scope: s}
	}
	w.pending.Causes[c]++
	w.pending.widen(s)
	if device != "" {
		w.pending.addDevice(device)
	}
	w.pendingEnd = w.pendingEnd || end
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

// Stats returns the cumulative counters, in copies of the maps. It is
// safe from any goroutine.
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Stats{
		Uevents:   maps.Clone(w.stats.Uevents),
		Dropped:   maps.Clone(w.stats.Dropped),
		Overflows: maps.Clone(w.stats.Overflows),
	}
}

// newStats returns zero counters for every key that can be counted.
func newStats() Stats {
	s := Stats{
		Uevents:   make(map[UeventKind]uint64),
		Dropped:   map[string]uint64{dropNotKernel: 0, dropMalformed: 0},
		Overflows: map[string]uint64{sourceUevent: 0, sourceRtnetlink: 0, sourceEthtool: 0},
	}
	for sub, actions := range interesting {
		for _, a := range actions {
			s.Uevents[UeventKind{sub, a}] = 0
		}
	}
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
	if w.ethtool != nil {
		wg.Go(func() { w.pumpEthtool(w.ethtool) })
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
	if w.ethtool != nil {
		errs = append(errs, w.ethtool.Close())
	}
	return errors.Join(errs...)
}

// loop is the debouncer. Hints that find no burst open are emitted at
// once and open one, so that a lone event costs no wait. The hints that
// follow, while it is open, are collected and emitted Window after the
// last of them or MaxDelay after the first of them, so that a burst
// ends in a round that sees its final state. A burst closes once no
// hint has come for Window.
//
// Lost events are never emitted at once, and widen every trigger their
// burst emits after them to ScopeAll: after an overflow the kernel
// drops further messages without a word until the socket's queue is
// drained (netlink_broadcast_deliver refuses a congested socket), so
// only a full read after the burst has gone quiet sees what they said.
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
					burst.widen(ScopeAll)
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

// merge adds o's hints to t: their counts, the earlier First, the
// wider Scope and the union of Devices. A t without causes becomes o.
func (t *Trigger) merge(o Trigger) {
	if t.Causes == nil {
		*t = o
		return
	}
	for c, n := range o.Causes {
		t.Causes[c] += n
	}
	if o.First.Before(t.First) {
		t.First = o.First
	}
	t.widen(o.Scope)
	for _, d := range o.Devices {
		t.addDevice(d)
	}
}

// widen widens t's scope to s if s is wider; at ScopeAll it drops
// Devices.
func (t *Trigger) widen(s Scope) {
	if t.Scope = wider(t.Scope, s); t.Scope == ScopeAll {
		t.Devices = nil
	}
}

// addDevice adds PCI address d to Devices, keeping them sorted and
// unique. Past maxDevices it widens t to ScopeAll instead; at ScopeAll
// it does nothing.
func (t *Trigger) addDevice(d string) {
	if t.Scope == ScopeAll {
		return
	}
	i, found := slices.BinarySearch(t.Devices, d)
	switch {
	case found:
	case len(t.Devices) == maxDevices:
		t.widen(ScopeAll)
	default:
		t.Devices = slices.Insert(t.Devices, i, d)
	}
}

func (w *Watcher) pumpUevents(s ueventSource) {
	for {
		u, err := s.Receive()
		if err != nil {
			if w.sourceError(sourceUevent, err) {
				return
			}
			continue
		}
		if !Interesting(u) {
			continue
		}
		w.mu.Lock()
		w.stats.Uevents[UeventKind{u.Subsystem, u.Action}]++
		w.mu.Unlock()
		w.hint(CauseUevent, subsystemScope[u.Subsystem], pciDevice(u), u.Subsystem == "pci" && u.Action == "bind")
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
			if w.sourceError(sourceRtnetlink, err) {
				return
			}
			continue
		}
		for _, ev := range evs {
			if linkChanged(seen, ev) {
				w.Hint(CauseLink)
			}
		}
	}
}

// pumpEthtool turns each channel change into a hint at ScopeDevices,
// coalesced like link events: the driver may have freed and requested
// vectors, or rewritten their affinities, so the devices' IRQs are
// re-read. No device is named (Trigger.Devices): the notification
// names an interface, not a PCI address, and what a round keeps of a
// device not named holds across a channel change: its node, class and
// driver, and the managed state of a vector requested again under the
// same /proc/interrupts row by the same driver.
func (w *Watcher) pumpEthtool(s ethtoolSource) {
	for {
		evs, err := s.Receive()
		if err != nil {
			if w.sourceError(sourceEthtool, err) {
				return
			}
			continue
		}
		for range evs {
			w.hint(CauseChannels, ScopeDevices, "", false)
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
		w.count(w.stats.Overflows, source)
		w.Hint(CauseLost)
	case errors.Is(err, ErrNotKernel):
		w.count(w.stats.Dropped, dropNotKernel)
		w.logOnce(source+"/dropped", "watch: %s: dropped message: %v (further ones are only counted)", source, err)
	case errors.Is(err, ErrTruncated):
		w.count(w.stats.Dropped, dropMalformed)
		w.logOnce(source+"/truncated", "watch: %s: %v (further ones are only counted)", source, err)
		w.Hint(CauseLost)
	case errors.Is(err, kernfs.ErrMalformed), errors.Is(err, ErrLibudev):
		w.count(w.stats.Dropped, dropMalformed)
		w.logOnce(source+"/malformed", "watch: %s: dropped message: %v (further ones are only counted)", source, err)
	default:
		w.degrade(source, err)
		w.Hint(CauseLost)
		return true
	}
	return false
}

// count increments m[key] under the lock; m is one of w.stats' maps.
func (w *Watcher) count(m map[string]uint64, key string) {
	w.mu.Lock()
	m[key]++
	w.mu.Unlock()
}

func (w *Watcher) degrade(source string, err error) {
	w.mu.Lock()
	w.degraded = append(w.degraded, fmt.Errorf("watch: %s source: %w", source, err))
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
