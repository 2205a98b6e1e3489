package watch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The coalescing tests run in a synctest bubble: time is fake and
// advances only when every goroutine of the bubble is blocked, so the
// assertions on counts, ordering and even instants are deterministic.

const (
	testWindow   = 100 * time.Millisecond
	testMaxDelay = 500 * time.Millisecond
)

// startWatcher runs a Watcher with no sockets (and fake sources, if
// given) until the test ends.
func startWatcher(t *testing.T, opts Options, u ueventSource, l linkSource) *Watcher {
	t.Helper()
	return startSources(t, opts, u, l, nil)
}

// startSources is startWatcher with an ethtool source too.
func startSources(t *testing.T, opts Options, u ueventSource, l linkSource, e ethtoolSource) *Watcher {
	t.Helper()
	if opts.Window == 0 {
		opts.Window = testWindow
	}
	if opts.MaxDelay == 0 {
		opts.MaxDelay = testMaxDelay
	}
	if opts.Resync == 0 {
		opts.Resync = -1
	}
	opts.Uevents, opts.Links, opts.Ethtool = u != nil, l != nil, e != nil
	opts.Logf = t.Logf
	w, err := newWatcher(opts, openers{
		func(int) (ueventSource, error) { return u, nil },
		func(int) (linkSource, error) { return l, nil },
		func(int) (ethtoolSource, error) { return e, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return w
}

// poll returns the pending trigger, if any, without waiting.
func poll(w *Watcher) (Trigger, bool) {
	select {
	case tr := <-w.Triggers():
		return tr, true
	default:
		return Trigger{}, false
	}
}

func wantCauses(t *testing.T, tr Trigger, want map[Cause]int) {
	t.Helper()
	if !maps.Equal(tr.Causes, want) {
		t.Errorf("causes = %v, want %v", tr.Causes, want)
	}
}

// nonZero returns the entries of m that are not zero: Stats holds every
// possible key from the start.
func nonZero[K comparable](m map[K]uint64) map[K]uint64 {
	out := make(map[K]uint64)
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// wantStats compares the non-zero counters of s with the given ones.
func wantStats(t *testing.T, s Stats, uevents map[UeventKind]uint64, dropped, overflows map[string]uint64) {
	t.Helper()
	if got := nonZero(s.Uevents); !maps.Equal(got, uevents) {
		t.Errorf("Stats.Uevents = %v, want %v", got, uevents)
	}
	if got := nonZero(s.Dropped); !maps.Equal(got, dropped) {
		t.Errorf("Stats.Dropped = %v, want %v", got, dropped)
	}
	if got := nonZero(s.Overflows); !maps.Equal(got, overflows) {
		t.Errorf("Stats.Overflows = %v, want %v", got, overflows)
	}
}

func TestBurstGivesLeadingAndTrailing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := startWatcher(t, Options{}, nil, nil)
		start := time.Now()
		w.Hint(CauseUevent)
		synctest.Wait()
		// The first hint is emitted at once, alone.
		tr, ok := poll(w)
		if !ok {
			t.Fatal("no trigger at the first hint")
		}
		wantCauses(t, tr, map[Cause]int{CauseUevent: 1})
		if !tr.First.Equal(start) {
			t.Errorf("leading First = %v, want the first hint's arrival %v", tr.First, start)
		}
		// The rest of the burst is held until the burst ends.
		second := time.Now()
		for range 4 {
			w.Hint(CauseUevent)
			w.Hint(CauseLink)
		}
		w.Hint(CauseSIGHUP)
		synctest.Wait()
		if tr, ok := poll(w); ok {
			t.Fatalf("trigger %v inside the burst", tr.Causes)
		}
		tr = <-w.Triggers()
		if got := time.Since(start); got != testWindow {
			t.Errorf("trailing trigger after %v, want the window %v after the last hint", got, testWindow)
		}
		if !tr.First.Equal(second) {
			t.Errorf("trailing First = %v, want its own first hint's arrival %v", tr.First, second)
		}
		wantCauses(t, tr, map[Cause]int{CauseUevent: 4, CauseLink: 4, CauseSIGHUP: 1})
		if !tr.Reload() || tr.Scope != ScopeAll {
			t.Errorf("trailing trigger: Reload %v, Scope %v; want the SIGHUP's reload and all", tr.Reload(), tr.Scope)
		}
		time.Sleep(10 * testMaxDelay)
		if tr, ok := poll(w); ok {
			t.Errorf("third trigger %v from one burst", tr.Causes)
		}
		// Hints are not counted in Stats: only what the kernel sent.
		wantStats(t, w.Stats(), map[UeventKind]uint64{}, map[string]uint64{}, map[string]uint64{})
	})
}

// TestLeadingEdgeNoWait runs on real time with a window of an hour: a
// lone hint must still come out, so it cannot be waiting for the window.
func TestLeadingEdgeNoWait(t *testing.T) {
	w := startWatcher(t, Options{Window: time.Hour, MaxDelay: 2 * time.Hour}, nil, nil)
	w.Hint(CauseConfig)
	select {
	case tr := <-w.Triggers():
		wantCauses(t, tr, map[Cause]int{CauseConfig: 1})
	case <-time.After(10 * time.Second):
		t.Fatal("no trigger for a lone hint: it waited for the window")
	}
}

// TestBurstScopes checks that the leading and the trailing trigger of a
// burst each carry the scope and devices of their own hints.
func TestBurstScopes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake[Uevent]()
		w := startWatcher(t, Options{}, src, nil)
		src.send(Uevent{Action: "offline", Subsystem: "cpu", DevPath: "/devices/system/cpu/cpu5"}, nil)
		synctest.Wait()
		tr, ok := poll(w)
		if !ok {
			t.Fatal("no trigger at the first uevent")
		}
		if tr.Scope != ScopeCPU || tr.Devices != nil {
			t.Errorf("leading trigger: scope %v, devices %q; want cpu, none", tr.Scope, tr.Devices)
		}
		src.send(Uevent{Action: "unbind", Subsystem: "pci", DevPath: virtioPCI}, nil)
		src.send(Uevent{Action: "online", Subsystem: "cpu", DevPath: "/devices/system/cpu/cpu5"}, nil)
		tr = <-w.Triggers()
		wantCauses(t, tr, map[Cause]int{CauseUevent: 2})
		if tr.Scope != ScopeDevices || !slices.Equal(tr.Devices, []string{"0000:41:00.0"}) {
			t.Errorf("trailing trigger: scope %v, devices %q; want devices, 0000:41:00.0", tr.Scope, tr.Devices)
		}
	})
}

// TestLostIsHeld checks that lost events wait for their burst to go
// quiet and that every trigger the burst emits after them reads all:
// the kernel drops messages silently until the queue is drained.
func TestLostIsHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake[Uevent]()
		w := startWatcher(t, Options{}, src, nil)
		overflow := fmt.Errorf("uevent: %w", ErrOverflow)
		cpu := Uevent{Action: "online", Subsystem: "cpu", DevPath: "/devices/system/cpu/cpu5"}

		start := time.Now()
		src.send(Uevent{}, overflow)
		synctest.Wait()
		if tr, ok := poll(w); ok {
			t.Fatalf("trigger %v at once for lost events", tr.Causes)
		}
		tr := <-w.Triggers()
		if got := time.Since(start); got != testWindow {
			t.Errorf("lost events emitted after %v, want the window %v", got, testWindow)
		}
		wantCauses(t, tr, map[Cause]int{CauseLost: 1})
		if tr.Scope != ScopeAll {
			t.Errorf("lost events at scope %v, want all", tr.Scope)
		}

		// A burst: a cpu uevent, lost events, then cpu uevents every
		// half window for three MaxDelays.
		time.Sleep(2 * testWindow) // the burst above is closed
		var triggers []Trigger
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case tr := <-w.Triggers():
					triggers = append(triggers, tr)
				case <-stop:
					return
				}
			}
		}()
		src.send(cpu, nil)
		synctest.Wait()
		src.send(Uevent{}, overflow)
		for range 3 * testMaxDelay / (testWindow / 2) {
			time.Sleep(testWindow / 2)
			src.send(cpu, nil)
		}
		time.Sleep(2 * testMaxDelay)
		// The burst is closed: a cpu uevent reads the CPUs again.
		src.send(cpu, nil)
		synctest.Wait()
		close(stop)
		<-done
		if len(triggers) < 4 {
			t.Fatalf("%d triggers, want the first uevent, the lost ones, at least one more, and the last", len(triggers))
		}
		first, end := triggers[0], triggers[len(triggers)-1]
		if first.Scope != ScopeCPU || first.Causes[CauseLost] != 0 {
			t.Errorf("first trigger %v at %v, want the cpu uevent alone", first.Causes, first.Scope)
		}
		if triggers[1].Causes[CauseLost] != 1 {
			t.Errorf("second trigger %v, want the lost events", triggers[1].Causes)
		}
		for i, tr := range triggers[1 : len(triggers)-1] {
			if tr.Scope != ScopeAll {
				t.Errorf("trigger %d %v after lost events at scope %v, want all", i+1, tr.Causes, tr.Scope)
			}
		}
		if end.Scope != ScopeCPU || !maps.Equal(end.Causes, map[Cause]int{CauseUevent: 1}) {
			t.Errorf("trigger %v at %v after the burst, want one uevent at cpu", end.Causes, end.Scope)
		}
	})
}

func TestQuietWindowExtendsBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := startWatcher(t, Options{}, nil, nil)
		w.Hint(CauseUevent)
		synctest.Wait()
		if _, ok := poll(w); !ok {
			t.Fatal("no trigger at the first hint")
		}
		// Hints closer together than the window belong to one burst.
		for i := range 3 {
			time.Sleep(testWindow * 6 / 10)
			w.Hint(CauseUevent)
			synctest.Wait()
			if tr, ok := poll(w); ok {
				t.Fatalf("trigger %v after hint %d, inside the quiet window", tr.Causes, i+1)
			}
		}
		time.Sleep(testWindow * 6 / 10)
		if tr, ok := poll(w); ok {
			t.Fatalf("trigger %v %v after the last hint, inside the quiet window", tr.Causes, testWindow*6/10)
		}
		time.Sleep(testWindow * 4 / 10)
		synctest.Wait()
		tr, ok := poll(w)
		if !ok {
			t.Fatal("no trigger after the window went quiet")
		}
		// The three hints after the first, and only they.
		wantCauses(t, tr, map[Cause]int{CauseUevent: 3})
		// The burst is closed: a new hint is emitted at once, alone.
		start := time.Now()
		w.Hint(CauseLink)
		synctest.Wait()
		tr, ok = poll(w)
		if !ok {
			t.Fatal("no trigger at once for the hint after a closed burst")
		}
		wantCauses(t, tr, map[Cause]int{CauseLink: 1})
		if !tr.First.Equal(start) {
			t.Errorf("new burst First = %v, want its own hint %v", tr.First, start)
		}
		// A burst of that one hint emits nothing more, and closes a
		// window after it.
		time.Sleep(testWindow * 3 / 2)
		if tr, ok := poll(w); ok {
			t.Errorf("trigger %v after a burst of one hint", tr.Causes)
		}
		w.Hint(CauseConfig)
		synctest.Wait()
		tr, ok = poll(w)
		if !ok {
			t.Fatal("no trigger at once after a burst of one hint closed")
		}
		wantCauses(t, tr, map[Cause]int{CauseConfig: 1})
	})
}

func TestMaxDelayBoundsStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := startWatcher(t, Options{}, nil, nil)
		var (
			mu       sync.Mutex
			triggers []Trigger
			emitted  []time.Time
		)
		consumer := make(chan struct{})
		go func() {
			defer close(consumer)
			for tr := range w.Triggers() {
				mu.Lock()
				triggers = append(triggers, tr)
				emitted = append(emitted, time.Now())
				mu.Unlock()
			}
		}()
		// A hint every half window for 2 s never leaves the window quiet.
		const n = 2 * time.Second / (testWindow / 2)
		for range n {
			w.Hint(CauseUevent)
			time.Sleep(testWindow / 2)
		}
		time.Sleep(2 * testMaxDelay)
		mu.Lock()
		defer mu.Unlock()
		// The first hint at once, then 2 s of stream held at most
		// 500 ms at a time: 4 triggers, perhaps 5 if the tail splits.
		if len(triggers) < 5 || len(triggers) > 6 {
			t.Fatalf("%d triggers for a 2 s stream, want 5 or 6", len(triggers))
		}
		wantCauses(t, triggers[0], map[Cause]int{CauseUevent: 1})
		if !emitted[0].Equal(triggers[0].First) {
			t.Errorf("first trigger emitted %v after its hint, want at once", emitted[0].Sub(triggers[0].First))
		}
		total := 0
		for i, tr := range triggers {
			total += tr.Causes[CauseUevent]
			if lat := emitted[i].Sub(tr.First); lat > testMaxDelay {
				t.Errorf("trigger %d emitted %v after its first hint, more than MaxDelay", i, lat)
			}
			if i > 0 && !tr.First.After(triggers[i-1].First) {
				t.Errorf("trigger %d is not after trigger %d", i, i-1)
			}
		}
		if total != int(n) {
			t.Errorf("triggers carry %d hints, want %d", total, n)
		}
	})
}

func TestSlowConsumerMerges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := startWatcher(t, Options{}, nil, nil)
		start := time.Now()
		// Four bursts, each emitted while the previous one still waits.
		for _, c := range []Cause{CauseUevent, CauseLink, CauseSIGHUP, CauseUevent} {
			w.Hint(c) // never blocks, though nobody reads
			time.Sleep(2 * testMaxDelay)
		}
		tr, ok := poll(w)
		if !ok {
			t.Fatal("no trigger")
		}
		wantCauses(t, tr, map[Cause]int{CauseUevent: 2, CauseLink: 1, CauseSIGHUP: 1})
		if !tr.First.Equal(start) {
			t.Errorf("First = %v, want the oldest hint %v", tr.First, start)
		}
		if !tr.Reload() {
			t.Error("merged trigger lost the SIGHUP's reload")
		}
		if _, ok := poll(w); ok {
			t.Error("more than one trigger pending")
		}
	})
}

func TestResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const resync = time.Minute
		w := startWatcher(t, Options{Resync: resync}, nil, nil)
		start := time.Now()
		tr := <-w.Triggers()
		wantCauses(t, tr, map[Cause]int{CauseResync: 1})
		if got := time.Since(start); got < resync {
			t.Errorf("resync after %v, want at least %v", got, resync)
		}
		// An event-driven trigger restarts the idle clock.
		time.Sleep(resync / 2)
		w.Hint(CauseSIGHUP)
		wantCauses(t, <-w.Triggers(), map[Cause]int{CauseSIGHUP: 1})
		time.Sleep(resync * 3 / 4)
		if tr, ok := poll(w); ok {
			t.Errorf("resync %v although a trigger was emitted %v ago", tr.Causes, resync*3/4)
		}
		wantCauses(t, <-w.Triggers(), map[Cause]int{CauseResync: 1})
	})
}

func TestRunStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, err := newWatcher(Options{Resync: time.Second}, openers{})
		if err != nil {
			t.Fatal(err)
		}
		w.Hint(CauseConfig) // kept until Run starts
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- w.Run(ctx) }()
		wantCauses(t, <-w.Triggers(), map[Cause]int{CauseConfig: 1})
		if err := w.Run(ctx); err == nil {
			t.Error("second Run succeeded")
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
		if _, open := <-w.Triggers(); open {
			t.Error("Triggers not closed after Run")
		}
		w.Hint(CauseSIGHUP) // ignored, must not block or panic
	})
}

func TestOptions(t *testing.T) {
	w, err := newWatcher(Options{}, openers{})
	if err != nil {
		t.Fatal(err)
	}
	if w.opts.Window != DefaultWindow || w.opts.MaxDelay != DefaultMaxDelay || w.opts.Resync != DefaultResync {
		t.Errorf("defaults = %v %v %v", w.opts.Window, w.opts.MaxDelay, w.opts.Resync)
	}
	for _, o := range []Options{
		{Window: -1},
		{Window: time.Second, MaxDelay: time.Millisecond},
		{MaxDelay: -1},
		{ReceiveBuffer: -1},
	} {
		if _, err := newWatcher(o, openers{}); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// fakeSource replays scripted receive results, then blocks until Close.
type fakeSource[T any] struct {
	items  chan fakeItem[T]
	closed chan struct{}
	once   sync.Once
}

type fakeItem[T any] struct {
	v   T
	err error
}

func newFake[T any]() *fakeSource[T] {
	return &fakeSource[T]{items: make(chan fakeItem[T], 16), closed: make(chan struct{})}
}

func (f *fakeSource[T]) send(v T, err error) { f.items <- fakeItem[T]{v, err} }

func (f *fakeSource[T]) Receive() (T, error) {
	select {
	case it := <-f.items:
		return it.v, it.err
	case <-f.closed:
		var zero T
		return zero, fmt.Errorf("fake: %w", os.ErrClosed)
	}
}

func (f *fakeSource[T]) Close() error {
	f.once.Do(func() { close(f.closed) })
	return nil
}

func TestUeventPump(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake[Uevent]()
		w := startWatcher(t, Options{}, src, nil)
		src.send(Uevent{Action: "offline", Subsystem: "cpu", DevPath: "/devices/system/cpu/cpu5"}, nil)
		src.send(Uevent{Action: "remove", Subsystem: "queues"}, nil)
		src.send(Uevent{Action: "add", Subsystem: "machinecheck"}, nil)
		src.send(Uevent{}, fmt.Errorf("uevent: %w: sender port 99", ErrNotKernel))
		src.send(Uevent{}, fmt.Errorf("uevent: %w", ErrOverflow))
		src.send(Uevent{}, fmt.Errorf("uevent: %w", kernfs.ErrMalformed))
		src.send(Uevent{}, fmt.Errorf("uevent: %w", ErrLibudev))
		src.send(Uevent{Action: "bind", Subsystem: "pci"}, nil)
		// Nobody reads: everything emitted merges into one trigger.
		time.Sleep(testMaxDelay)
		wantCauses(t, <-w.Triggers(), map[Cause]int{CauseUevent: 2, CauseLost: 1})
		// Uninteresting uevents are neither hints nor counted.
		wantStats(t, w.Stats(),
			map[UeventKind]uint64{{"cpu", "offline"}: 1, {"pci", "bind"}: 1},
			map[string]uint64{"not_kernel": 1, "malformed": 2},
			map[string]uint64{"uevent": 1})
		if s := w.Stats(); len(s.Uevents) != len(newStats().Uevents) {
			t.Errorf("Stats.Uevents has %d kinds, want the %d interesting ones: %v", len(s.Uevents), len(newStats().Uevents), s.Uevents)
		}
		if w.Degraded() != nil {
			t.Errorf("Degraded = %v", w.Degraded())
		}
		// An unexpected error stops the source, degrades, and asks for
		// a rescan; hints keep working.
		errBroken := errors.New("recvmsg: broken")
		src.send(Uevent{}, errBroken)
		wantCauses(t, <-w.Triggers(), map[Cause]int{CauseLost: 1})
		if err := w.Degraded(); !errors.Is(err, errBroken) || !strings.Contains(err.Error(), "uevent source") {
			t.Errorf("Degraded = %v, want the uevent source's %v", err, errBroken)
		}
		w.Hint(CauseSIGHUP)
		wantCauses(t, <-w.Triggers(), map[Cause]int{CauseSIGHUP: 1})
	})
}

func TestLinkPump(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake[[]LinkEvent]()
		w := startWatcher(t, Options{}, nil, src)
		step := func(evs []LinkEvent, err error, want map[Cause]int) {
			t.Helper()
			src.send(evs, err)
			time.Sleep(testMaxDelay)
			tr, ok := poll(w)
			if want == nil {
				if ok {
					t.Errorf("%+v %v: trigger %v, want none", evs, err, tr.Causes)
				}
				return
			}
			wantCauses(t, tr, want)
		}
		link := map[Cause]int{CauseLink: 1}
		lo := LinkEvent{Index: 1, Name: "lo", Up: true}
		step([]LinkEvent{lo}, nil, link)    // first sight
		step([]LinkEvent{lo, lo}, nil, nil) // carrier/stats noise
		lo.Up = false
		step([]LinkEvent{lo}, nil, link) // down
		step([]LinkEvent{lo}, nil, nil)  // no change
		step(nil, fmt.Errorf("rtnetlink: %w", ErrOverflow), map[Cause]int{CauseLost: 1})
		step([]LinkEvent{lo}, nil, link) // state forgotten after overflow
		step([]LinkEvent{{Index: 1, Name: "lo0"}}, nil, link)
		step([]LinkEvent{{Index: 1, Name: "lo0", Deleted: true}}, nil, link)
		step(nil, fmt.Errorf("rtnetlink: %w: sender port 5", ErrNotKernel), nil)
		step(nil, fmt.Errorf("rtnetlink: %w", ErrTruncated), map[Cause]int{CauseLost: 1})
		wantStats(t, w.Stats(),
			map[UeventKind]uint64{},
			map[string]uint64{"not_kernel": 1, "malformed": 1},
			map[string]uint64{"rtnetlink": 1})
	})
}

func TestDegradedOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errPerm := fmt.Errorf("socket: %w", os.ErrPermission)
		var logged []string
		errNoFamily := fmt.Errorf("ethtool: %w: CTRL_CMD_GETFAMILY: %w", ErrNoFamily, syscall.ENOENT)
		w, err := newWatcher(Options{Uevents: true, Links: true, Ethtool: true, Resync: time.Minute,
			Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }},
			openers{
				func(int) (ueventSource, error) { return nil, errPerm },
				func(int) (linkSource, error) { return nil, errPerm },
				func(int) (ethtoolSource, error) { return nil, errNoFamily },
			})
		if err != nil {
			t.Fatalf("New failed on an unopenable source: %v", err)
		}
		err = w.Degraded()
		if !errors.Is(err, os.ErrPermission) {
			t.Errorf("Degraded = %v", err)
		}
		if !errors.Is(err, ErrNoFamily) {
			t.Errorf("Degraded = %v, want the ethtool source's ErrNoFamily", err)
		}
		for _, source := range []string{"uevent source", "rtnetlink source", "ethtool source"} {
			if err == nil || !strings.Contains(err.Error(), source) {
				t.Errorf("Degraded = %v, want it to name the %s", err, source)
			}
		}
		if len(logged) != 3 {
			t.Errorf("logged %q", logged)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- w.Run(ctx) }()
		w.Hint(CauseSIGHUP)
		wantCauses(t, <-w.Triggers(), map[Cause]int{CauseSIGHUP: 1})
		wantCauses(t, <-w.Triggers(), map[Cause]int{CauseResync: 1})
		cancel()
		<-done
	})
}

// TestRunRealSocketsNoLeak runs the Watcher on the host's real sockets
// (listening only) and checks that stopping it leaves no goroutine.
func TestRunRealSocketsNoLeak(t *testing.T) {
	defer goleak.VerifyNone(t)
	w, err := New(Options{Uevents: true, Links: true, Ethtool: true, Window: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Degraded(); err != nil {
		t.Logf("running degraded: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	w.Hint(CauseConfig)
	select {
	case tr := <-w.Triggers():
		// Real uevents may merge in; the hint must be there once.
		if tr.Causes[CauseConfig] != 1 || !tr.Reload() {
			t.Errorf("causes = %v", tr.Causes)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no trigger")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

func TestCauseString(t *testing.T) {
	// The names are metric label values: they must not change.
	want := []string{"uevent", "link", "overflow", "resync", "sighup", "config", "channels", "bans"}
	var got []string
	for i, c := range Causes() {
		if c != Cause(i) {
			t.Errorf("Causes()[%d] = %d, want them in order", i, c)
		}
		got = append(got, c.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("Causes() names = %q, want %q", got, want)
	}
	if s := Cause(200).String(); s != "Cause(200)" {
		t.Errorf("unknown cause String = %q", s)
	}
	cs := Causes()
	cs[0] = CauseConfig
	if Causes()[0] != CauseUevent {
		t.Error("Causes returns a shared slice")
	}
}

func TestTriggerLabel(t *testing.T) {
	tests := []struct {
		causes map[Cause]int
		label  string
		reload bool
	}{
		{nil, "resync", false},
		{map[Cause]int{}, "resync", false},
		{map[Cause]int{CauseResync: 1}, "resync", false},
		{map[Cause]int{CauseLink: 2, CauseResync: 1}, "link", false},
		{map[Cause]int{CauseUevent: 1, CauseLink: 9, CauseResync: 1}, "uevent", false},
		{map[Cause]int{CauseLost: 1, CauseUevent: 40, CauseLink: 3}, "overflow", false},
		{map[Cause]int{CauseChannels: 1, CauseLink: 2, CauseResync: 1}, "channels", false},
		{map[Cause]int{CauseUevent: 1, CauseChannels: 1}, "uevent", false},
		{map[Cause]int{CauseLost: 1, CauseChannels: 1}, "overflow", false},
		{map[Cause]int{CauseConfig: 1, CauseLost: 1, CauseUevent: 1}, "config", true},
		{map[Cause]int{CauseSIGHUP: 1, CauseConfig: 1, CauseLost: 1, CauseUevent: 1, CauseLink: 1, CauseResync: 1}, "sighup", true},
		{map[Cause]int{CauseSIGHUP: 1, CauseResync: 1}, "sighup", true},
		{map[Cause]int{CauseConfig: 1, CauseResync: 1}, "config", true},
		// A bans change re-reads everything but reloads nothing.
		{map[Cause]int{CauseBans: 1, CauseLost: 1, CauseUevent: 1}, "bans", false},
		{map[Cause]int{CauseConfig: 1, CauseBans: 1}, "config", true},
		// A zero count is no cause.
		{map[Cause]int{CauseSIGHUP: 0, CauseLost: 0, CauseLink: 1}, "link", false},
		// An unknown cause still asks for a rescan but names nothing.
		{map[Cause]int{Cause(200): 1}, "resync", false},
		{map[Cause]int{Cause(200): 1, CauseUevent: 1}, "uevent", false},
	}
	for _, tt := range tests {
		tr := Trigger{Causes: tt.causes}
		if got := tr.Label(); got != tt.label {
			t.Errorf("%v: Label = %q, want %q", tt.causes, got, tt.label)
		}
		if got := tr.Reload(); got != tt.reload {
			t.Errorf("%v: Reload = %v, want %v", tt.causes, got, tt.reload)
		}
	}
	// Alone, every cause names its own round.
	for _, c := range Causes() {
		if got := (Trigger{Causes: map[Cause]int{c: 1}}).Label(); got != c.String() {
			t.Errorf("Label of %v alone = %q", c, got)
		}
	}
}

// TestStatsBounded checks that Stats holds a fixed set of keys from the
// start, so that metrics labels stay bounded, and returns copies.
func TestStatsBounded(t *testing.T) {
	w, err := newWatcher(Options{}, openers{})
	if err != nil {
		t.Fatal(err)
	}
	s := w.Stats()
	kinds := 0
	for sub, actions := range interesting {
		for _, a := range actions {
			kinds++
			if n, ok := s.Uevents[UeventKind{sub, a}]; !ok || n != 0 {
				t.Errorf("Uevents[%s/%s] = %d, %v; want 0, present", sub, a, n, ok)
			}
			if !Interesting(Uevent{Subsystem: sub, Action: a}) {
				t.Errorf("%s/%s in the table but not Interesting", sub, a)
			}
		}
	}
	if len(s.Uevents) != kinds {
		t.Errorf("Uevents has %d kinds, want %d: %v", len(s.Uevents), kinds, s.Uevents)
	}
	if want := map[string]uint64{"not_kernel": 0, "malformed": 0}; !maps.Equal(s.Dropped, want) {
		t.Errorf("Dropped = %v, want %v", s.Dropped, want)
	}
	if want := map[string]uint64{"uevent": 0, "rtnetlink": 0, "ethtool": 0}; !maps.Equal(s.Overflows, want) {
		t.Errorf("Overflows = %v, want %v", s.Overflows, want)
	}
	s.Uevents[UeventKind{"cpu", "online"}] = 7
	s.Dropped["x"] = 1
	s.Overflows["uevent"] = 3
	wantStats(t, w.Stats(), map[UeventKind]uint64{}, map[string]uint64{}, map[string]uint64{})
	if len(w.Stats().Dropped) != 2 {
		t.Error("Stats returned the Watcher's own maps")
	}
}

// TestBindEndsBurst: a pci bind (the driver's probe is over, its IRQs
// requested) emits the burst's held hints at once instead of after the
// quiet window; hints after it are coalesced again, and lost events
// still wait.
func TestBindEndsBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake[Uevent]()
		w := startWatcher(t, Options{}, src, nil)
		src.send(Uevent{Action: "unbind", Subsystem: "pci", DevPath: virtioPCI}, nil)
		synctest.Wait()
		if _, ok := poll(w); !ok {
			t.Fatal("no leading trigger for the unbind")
		}
		src.send(Uevent{Action: "remove", Subsystem: "net", DevPath: "/devices/virtual/net/eth0"}, nil)
		src.send(Uevent{Action: "bind", Subsystem: "pci", DevPath: virtioPCI}, nil)
		synctest.Wait()
		tr, ok := poll(w)
		if !ok {
			t.Fatal("bind did not emit the held hints at once")
		}
		wantCauses(t, tr, map[Cause]int{CauseUevent: 2})
		if !slices.Equal(tr.Devices, []string{"0000:41:00.0"}) {
			t.Errorf("devices %q, want 0000:41:00.0", tr.Devices)
		}
		w.Hint(CauseLink)
		synctest.Wait()
		if tr, ok := poll(w); ok {
			t.Fatalf("a hint after the bind was emitted at once: %v", tr.Causes)
		}
		start := time.Now()
		tr = <-w.Triggers()
		if got := time.Since(start); got != testWindow {
			t.Errorf("hint after the bind emitted after %v, want the window %v", got, testWindow)
		}
		wantCauses(t, tr, map[Cause]int{CauseLink: 1})

		// Lost events in the burst: the bind does not cut it short.
		time.Sleep(testWindow)
		src.send(Uevent{}, fmt.Errorf("uevent: %w", ErrOverflow))
		src.send(Uevent{Action: "bind", Subsystem: "pci", DevPath: virtioPCI}, nil)
		synctest.Wait()
		if tr, ok := poll(w); ok {
			t.Fatalf("trigger %v at once after lost events", tr.Causes)
		}
		if tr := <-w.Triggers(); tr.Scope != ScopeAll {
			t.Errorf("trigger after lost events: scope %v, want all", tr.Scope)
		}
	})
}
