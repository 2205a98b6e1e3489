package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
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
	if opts.Window == 0 {
		opts.Window = testWindow
	}
	if opts.MaxDelay == 0 {
		opts.MaxDelay = testMaxDelay
	}
	if opts.Resync == 0 {
		opts.Resync = -1
	}
	opts.Uevents, opts.Links = u != nil, l != nil
	opts.Logf = t.Logf
	w, err := newWatcher(opts,
		func(int) (ueventSource, error) { return u, nil },
		func(int) (linkSource, error) { return l, nil })
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

func wantReasons(t *testing.T, tr Trigger, want map[string]int) {
	t.Helper()
	if fmt.Sprint(tr.Reasons) != fmt.Sprint(want) {
		t.Errorf("reasons = %v, want %v", tr.Reasons, want)
	}
}

func TestBurstGivesOneTrigger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := startWatcher(t, Options{}, nil, nil)
		start := time.Now()
		for range 5 {
			w.Hint("cpu/offline")
			w.Hint("link")
		}
		w.Hint("pci/bind")
		tr := <-w.Triggers()
		if got := time.Since(start); got < testWindow || got > testMaxDelay {
			t.Errorf("trigger after %v, want within [%v, %v]", got, testWindow, testMaxDelay)
		}
		if !tr.First.Equal(start) {
			t.Errorf("First = %v, want the first hint's arrival %v", tr.First, start)
		}
		wantReasons(t, tr, map[string]int{"cpu/offline": 5, "link": 5, "pci/bind": 1})
		time.Sleep(10 * testMaxDelay)
		if tr, ok := poll(w); ok {
			t.Errorf("second trigger %v from one burst", tr.Reasons)
		}
		if s := w.Stats(); s.Triggers != 1 || s.Hints["cpu/offline"] != 5 || s.Merged != 0 {
			t.Errorf("stats = %+v", s)
		}
	})
}

func TestQuietWindowExtendsBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := startWatcher(t, Options{}, nil, nil)
		// Hints closer together than the window belong to one burst.
		for i := range 4 {
			w.Hint(fmt.Sprintf("h%d", i))
			time.Sleep(testWindow * 6 / 10)
			synctest.Wait()
			if tr, ok := poll(w); ok {
				t.Fatalf("trigger %v after hint %d, inside the quiet window", tr.Reasons, i)
			}
		}
		time.Sleep(testWindow)
		tr, ok := poll(w)
		if !ok {
			t.Fatal("no trigger after the window went quiet")
		}
		wantReasons(t, tr, map[string]int{"h0": 1, "h1": 1, "h2": 1, "h3": 1})
		// After a quiet window, a new hint starts a new burst.
		w.Hint("h4")
		wantReasons(t, <-w.Triggers(), map[string]int{"h4": 1})
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
			w.Hint("net/add")
			time.Sleep(testWindow / 2)
		}
		time.Sleep(2 * testMaxDelay)
		mu.Lock()
		defer mu.Unlock()
		// 2 s of stream bounded at 500 ms per burst: 4 bursts, plus
		// perhaps the tail.
		if len(triggers) < 4 || len(triggers) > 5 {
			t.Errorf("%d triggers for a 2 s stream, want 4 or 5", len(triggers))
		}
		total := 0
		for i, tr := range triggers {
			total += tr.Reasons["net/add"]
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
		for _, r := range []string{"cpu/offline", "pci/unbind", "pci/bind", "cpu/offline"} {
			w.Hint(r) // never blocks, though nobody reads
			time.Sleep(2 * testMaxDelay)
		}
		tr, ok := poll(w)
		if !ok {
			t.Fatal("no trigger")
		}
		wantReasons(t, tr, map[string]int{"cpu/offline": 2, "pci/unbind": 1, "pci/bind": 1})
		if !tr.First.Equal(start) {
			t.Errorf("First = %v, want the oldest hint %v", tr.First, start)
		}
		if _, ok := poll(w); ok {
			t.Error("more than one trigger pending")
		}
		if s := w.Stats(); s.Triggers != 4 || s.Merged != 3 {
			t.Errorf("Triggers, Merged = %d, %d; want 4, 3", s.Triggers, s.Merged)
		}
	})
}

func TestResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const resync = time.Minute
		w := startWatcher(t, Options{Resync: resync}, nil, nil)
		start := time.Now()
		tr := <-w.Triggers()
		wantReasons(t, tr, map[string]int{ReasonResync: 1})
		if got := time.Since(start); got < resync {
			t.Errorf("resync after %v, want at least %v", got, resync)
		}
		// An event-driven trigger restarts the idle clock.
		time.Sleep(resync / 2)
		w.Hint("sighup")
		wantReasons(t, <-w.Triggers(), map[string]int{"sighup": 1})
		time.Sleep(resync * 3 / 4)
		if tr, ok := poll(w); ok {
			t.Errorf("resync %v although a trigger was emitted %v ago", tr.Reasons, resync*3/4)
		}
		wantReasons(t, <-w.Triggers(), map[string]int{ReasonResync: 1})
	})
}

func TestRunStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, err := newWatcher(Options{Resync: time.Second}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.Hint("before-run") // kept until Run starts
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- w.Run(ctx) }()
		wantReasons(t, <-w.Triggers(), map[string]int{"before-run": 1})
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
		w.Hint("after-run") // ignored, must not block or panic
	})
}

func TestOptions(t *testing.T) {
	w, err := newWatcher(Options{}, nil, nil)
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
		if _, err := newWatcher(o, nil, nil); err == nil {
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
		src.send(Uevent{}, fmt.Errorf("uevent: %w", ErrMalformed))
		src.send(Uevent{}, fmt.Errorf("uevent: %w", ErrLibudev))
		src.send(Uevent{Action: "bind", Subsystem: "pci"}, nil)
		wantReasons(t, <-w.Triggers(), map[string]int{"cpu/offline": 1, "pci/bind": 1, ReasonOverflow: 1})
		s := w.Stats()
		if s.Ignored != 2 || s.Dropped != 1 || s.Overflows != 1 || s.Malformed != 2 || len(s.Degraded) != 0 {
			t.Errorf("stats = %+v", s)
		}
		if w.Degraded() != nil {
			t.Errorf("Degraded = %v", w.Degraded())
		}
		// An unexpected error stops the source, degrades, and asks for
		// a rescan; hints keep working.
		errBroken := errors.New("recvmsg: broken")
		src.send(Uevent{}, errBroken)
		wantReasons(t, <-w.Triggers(), map[string]int{ReasonDegraded: 1})
		if err := w.Degraded(); !errors.Is(err, errBroken) {
			t.Errorf("Degraded = %v", err)
		}
		if w.Stats().Degraded["uevent"] == "" {
			t.Error("Stats.Degraded lacks the uevent source")
		}
		w.Hint("sighup")
		wantReasons(t, <-w.Triggers(), map[string]int{"sighup": 1})
	})
}

func TestLinkPump(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake[[]LinkEvent]()
		w := startWatcher(t, Options{}, nil, src)
		step := func(evs []LinkEvent, err error, want map[string]int) {
			t.Helper()
			src.send(evs, err)
			time.Sleep(testMaxDelay)
			tr, ok := poll(w)
			if want == nil {
				if ok {
					t.Errorf("%+v %v: trigger %v, want none", evs, err, tr.Reasons)
				}
				return
			}
			wantReasons(t, tr, want)
		}
		lo := LinkEvent{Index: 1, Name: "lo", Up: true}
		step([]LinkEvent{lo}, nil, map[string]int{ReasonLink: 1}) // first sight
		step([]LinkEvent{lo, lo}, nil, nil)                       // carrier/stats noise
		lo.Up = false
		step([]LinkEvent{lo}, nil, map[string]int{ReasonLink: 1}) // down
		step(nil, fmt.Errorf("rtnetlink: %w", ErrOverflow), map[string]int{ReasonOverflow: 1})
		step([]LinkEvent{lo}, nil, map[string]int{ReasonLink: 1}) // state forgotten after overflow
		step([]LinkEvent{{Index: 1, Name: "lo0"}}, nil, map[string]int{ReasonLink: 1})
		step([]LinkEvent{{Index: 1, Name: "lo0", Deleted: true}}, nil, map[string]int{ReasonLink: 1})
		step(nil, fmt.Errorf("rtnetlink: %w: sender port 5", ErrNotKernel), nil)
		step(nil, fmt.Errorf("rtnetlink: %w", ErrTruncated), map[string]int{ReasonTruncated: 1})
		if s := w.Stats(); s.Ignored != 2 || s.Dropped != 1 || s.Overflows != 1 || s.Malformed != 1 {
			t.Errorf("stats = %+v", s)
		}
	})
}

func TestDegradedOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errPerm := fmt.Errorf("socket: %w", os.ErrPermission)
		var logged []string
		w, err := newWatcher(Options{Uevents: true, Links: true, Resync: time.Minute,
			Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }},
			func(int) (ueventSource, error) { return nil, errPerm },
			func(int) (linkSource, error) { return nil, errPerm })
		if err != nil {
			t.Fatalf("New failed on an unopenable source: %v", err)
		}
		if err := w.Degraded(); !errors.Is(err, os.ErrPermission) {
			t.Errorf("Degraded = %v", err)
		}
		if s := w.Stats(); len(s.Degraded) != 2 {
			t.Errorf("Stats.Degraded = %v", s.Degraded)
		}
		if len(logged) != 2 {
			t.Errorf("logged %q", logged)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- w.Run(ctx) }()
		w.Hint("sighup")
		wantReasons(t, <-w.Triggers(), map[string]int{"sighup": 1})
		wantReasons(t, <-w.Triggers(), map[string]int{ReasonResync: 1})
		cancel()
		<-done
	})
}

// TestRunRealSocketsNoLeak runs the Watcher on the host's real sockets
// (listening only) and checks that stopping it leaves no goroutine.
func TestRunRealSocketsNoLeak(t *testing.T) {
	defer goleak.VerifyNone(t)
	w, err := New(Options{Uevents: true, Links: true, Window: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Degraded(); err != nil {
		t.Logf("running degraded: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	w.Hint("test")
	select {
	case tr := <-w.Triggers():
		if tr.Reasons["test"] != 1 {
			t.Errorf("reasons = %v", tr.Reasons)
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
