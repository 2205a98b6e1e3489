package watch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"syscall"
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

// testOptions are valid Options: the test window and max delay, no
// resync.
func testOptions() Options { return Options{Window: testWindow, MaxDelay: testMaxDelay, Resync: -1} }

// startWatcher runs a Watcher with no sockets (and fake sources, if
// given) until the test ends.
func startWatcher(t *testing.T, opts Options, u ueventSource, l linkSource) *Watcher {
	t.Helper()
	return startSources(t, opts, u, l, nil, nil)
}

// startSources is startWatcher with ethtool and netdev sources too.
func startSources(t *testing.T, opts Options, u ueventSource, l linkSource, e ethtoolSource, n netdevSource) *Watcher {
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
	opts.Uevents, opts.Links, opts.Ethtool, opts.Netdev = u != nil, l != nil, e != nil, n != nil
	opts.Logf = t.Logf
	w, err := newWatcher(opts, openers{
		func(int) (ueventSource, error) { return u, nil },
		func(int) (linkSource, error) { return l, nil },
		func(int) (ethtoolSource, error) { return e, nil },
		func(int) (netdevSource, error) { return n, nil },
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
	case <-w.Ready():
		return w.Take()
	default:
		return Trigger{}, false
	}
}

// next waits for the next trigger; the zero Trigger once Run returned.
func next(w *Watcher) Trigger {
	for range w.Ready() {
		if tr, ok := w.Take(); ok {
			return tr
		}
	}
	return Trigger{}
}

// merge adds o's hints to t, for tests that gather what several
// triggers carried.
func (t *Trigger) merge(o Trigger) {
	if t.Causes == nil {
		*t = Trigger{Causes: map[Cause]int{}, First: o.First, cached: true}
	}
	for c, n := range o.Causes {
		t.Causes[c] += n
	}
	t.cached = t.cached && o.cached
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

func TestRunStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opts := testOptions()
		opts.Resync = time.Second
		w, err := newWatcher(opts, openers{})
		if err != nil {
			t.Fatal(err)
		}
		w.Hint(CauseConfig) // kept until Run starts
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- w.Run(ctx) }()
		wantCauses(t, next(w), map[Cause]int{CauseConfig: 1})
		if err := w.Run(ctx); err == nil {
			t.Error("second Run succeeded")
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
		if _, open := <-w.Ready(); open {
			t.Error("Ready not closed after Run")
		}
		w.Hint(CauseSIGHUP) // ignored, must not block or panic
	})
}

// TestOptions checks that the durations have no defaults: a zero, as
// anything out of range, is refused with the value named.
func TestOptions(t *testing.T) {
	if _, err := newWatcher(testOptions(), openers{}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		change func(*Options)
		want   string
	}{
		{func(o *Options) { o.Window = 0 }, "window 0s"},
		{func(o *Options) { o.Window = -1 }, "window -1ns"},
		{func(o *Options) { o.MaxDelay = 0 }, "max delay 0s"},
		{func(o *Options) { o.Window, o.MaxDelay = time.Second, time.Millisecond }, "max delay 1ms is shorter than window 1s"},
		{func(o *Options) { o.Resync = 0 }, "resync 0s"},
		{func(o *Options) { o.ReceiveBuffer = -1 }, "receive buffer -1"},
	} {
		o := testOptions()
		tt.change(&o)
		if _, err := newWatcher(o, openers{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: err = %v, want it to say %q", o, err, tt.want)
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

func TestDegradedOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errPerm := fmt.Errorf("socket: %w", os.ErrPermission)
		var logged []string
		errNoFamily := fmt.Errorf("ethtool: %w: CTRL_CMD_GETFAMILY: %w", ErrNoFamily, syscall.ENOENT)
		errNoGroup := fmt.Errorf("netdev: %w: family %q (id 30) has no group %q", ErrNoFamily, "netdev", "mgmt")
		w, err := newWatcher(Options{Uevents: true, Links: true, Ethtool: true, Netdev: true, Window: testWindow, MaxDelay: testMaxDelay, Resync: time.Minute,
			Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }},
			openers{
				func(int) (ueventSource, error) { return nil, errPerm },
				func(int) (linkSource, error) { return nil, errPerm },
				func(int) (ethtoolSource, error) { return nil, errNoFamily },
				func(int) (netdevSource, error) { return nil, errNoGroup },
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
		// A kernel without the netdev family (before 6.3) misses no
		// event: it is absent, not degraded, and not logged as such.
		if strings.Contains(err.Error(), "netdev") || !errors.Is(w.Absent(), ErrNoFamily) {
			t.Errorf("Degraded = %v, Absent = %v; want the netdev source absent only", err, w.Absent())
		}
		if len(logged) != 3 {
			t.Errorf("logged %q", logged)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- w.Run(ctx) }()
		w.Hint(CauseSIGHUP)
		wantCauses(t, next(w), map[Cause]int{CauseSIGHUP: 1})
		wantCauses(t, next(w), map[Cause]int{CauseResync: 1})
		cancel()
		<-done
	})
}

// TestRunRealSocketsNoLeak runs the Watcher on the host's real sockets
// (listening only) and checks that stopping it leaves no goroutine.
func TestRunRealSocketsNoLeak(t *testing.T) {
	defer goleak.VerifyNone(t)
	w, err := New(Options{Uevents: true, Links: true, Ethtool: true, Netdev: true, Window: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond,
		Resync: time.Minute, Logf: t.Logf})
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
	case <-w.Ready():
		tr, _ := w.Take()
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
