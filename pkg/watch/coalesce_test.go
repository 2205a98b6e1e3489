package watch

import (
	"fmt"
	"maps"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

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
		tr = next(w)
		if got := time.Since(start); got != testWindow {
			t.Errorf("trailing trigger after %v, want the window %v after the last hint", got, testWindow)
		}
		if !tr.First.Equal(second) {
			t.Errorf("trailing First = %v, want its own first hint's arrival %v", tr.First, second)
		}
		wantCauses(t, tr, map[Cause]int{CauseUevent: 4, CauseLink: 4, CauseSIGHUP: 1})
		if !tr.Reload() || !tr.Fresh() {
			t.Errorf("trailing trigger: Reload %v, Fresh %v; want the SIGHUP's reload, fresh", tr.Reload(), tr.Fresh())
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
	case <-w.Ready():
		tr, _ := w.Take()
		wantCauses(t, tr, map[Cause]int{CauseConfig: 1})
	case <-time.After(10 * time.Second):
		t.Fatal("no trigger for a lone hint: it waited for the window")
	}
}

// TestBurstFresh checks that the leading and the trailing trigger of a
// burst are each Fresh by their own hints.
func TestBurstFresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake[Uevent]()
		w := startWatcher(t, Options{}, src, nil)
		src.send(Uevent{Action: "offline", Subsystem: "cpu", DevPath: "/devices/system/cpu/cpu5"}, nil)
		synctest.Wait()
		tr, ok := poll(w)
		if !ok {
			t.Fatal("no trigger at the first uevent")
		}
		if tr.Fresh() {
			t.Error("leading trigger of a cpu uevent is fresh")
		}
		src.send(Uevent{Action: "unbind", Subsystem: "pci", DevPath: virtioPCI}, nil)
		synctest.Wait()
		w.Hint(CauseResync)
		tr = next(w)
		wantCauses(t, tr, map[Cause]int{CauseUevent: 1, CauseResync: 1})
		if !tr.Fresh() {
			t.Error("trailing trigger with a resync is not fresh")
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
		tr := next(w)
		if got := time.Since(start); got != testWindow {
			t.Errorf("lost events emitted after %v, want the window %v", got, testWindow)
		}
		wantCauses(t, tr, map[Cause]int{CauseLost: 1})
		if !tr.Fresh() {
			t.Error("lost events not fresh")
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
				case <-w.Ready():
					tr, ok := w.Take()
					if !ok {
						continue
					}
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
		// The burst is closed: a cpu uevent trusts the caches again.
		src.send(cpu, nil)
		synctest.Wait()
		close(stop)
		<-done
		if len(triggers) < 4 {
			t.Fatalf("%d triggers, want the first uevent, the lost ones, at least one more, and the last", len(triggers))
		}
		first, end := triggers[0], triggers[len(triggers)-1]
		if first.Fresh() || first.Causes[CauseLost] != 0 {
			t.Errorf("first trigger %v fresh %v, want the cpu uevent alone, not fresh", first.Causes, first.Fresh())
		}
		if triggers[1].Causes[CauseLost] != 1 {
			t.Errorf("second trigger %v, want the lost events", triggers[1].Causes)
		}
		for i, tr := range triggers[2 : len(triggers)-1] {
			if tr.Causes[CauseLost] != 0 {
				t.Errorf("trigger %d %v, want the uevents after the lost events", i+2, tr.Causes)
			}
		}
		for i, tr := range triggers[1 : len(triggers)-1] {
			if !tr.Fresh() {
				t.Errorf("trigger %d %v after lost events is not fresh", i+1, tr.Causes)
			}
		}
		if end.Fresh() || !maps.Equal(end.Causes, map[Cause]int{CauseUevent: 1}) {
			t.Errorf("trigger %v fresh %v after the burst, want one uevent, not fresh", end.Causes, end.Fresh())
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
			for range w.Ready() {
				tr, ok := w.Take()
				if !ok {
					continue
				}
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
		tr := next(w)
		wantCauses(t, tr, map[Cause]int{CauseResync: 1})
		if got := time.Since(start); got < resync {
			t.Errorf("resync after %v, want at least %v", got, resync)
		}
		// An event-driven trigger restarts the idle clock.
		time.Sleep(resync / 2)
		w.Hint(CauseSIGHUP)
		wantCauses(t, next(w), map[Cause]int{CauseSIGHUP: 1})
		time.Sleep(resync * 3 / 4)
		if tr, ok := poll(w); ok {
			t.Errorf("resync %v although a trigger was emitted %v ago", tr.Causes, resync*3/4)
		}
		wantCauses(t, next(w), map[Cause]int{CauseResync: 1})
	})
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
		if tr.Fresh() {
			t.Error("trigger of a net remove and a pci bind is fresh")
		}
		w.Hint(CauseLink)
		synctest.Wait()
		if tr, ok := poll(w); ok {
			t.Fatalf("a hint after the bind was emitted at once: %v", tr.Causes)
		}
		start := time.Now()
		tr = next(w)
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
		if tr := next(w); !tr.Fresh() {
			t.Errorf("trigger %v after lost events is not fresh", tr.Causes)
		}
	})
}

// TestOwnCauses: the consumer's own rounds come through the one
// accumulator as any hint does: a verify asked for later arrives then,
// and a later ask replaces it; the load period gives CauseLoad; all of
// them leave the caches valid and name the round after themselves.
func TestOwnCauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := startWatcher(t, Options{Load: time.Minute}, nil, nil)
		start := time.Now()
		w.HintAfter(CauseVerify, 2*time.Second)
		time.Sleep(time.Second)
		w.HintAfter(CauseVerify, 2*time.Second)
		tr := next(w)
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("verify after %v, want 3s: the second ask replaces the first", got)
		}
		wantCauses(t, tr, map[Cause]int{CauseVerify: 1})
		if tr.Fresh() || tr.Label() != LabelVerify {
			t.Errorf("verify trigger: Fresh %v, label %q", tr.Fresh(), tr.Label())
		}
		tr = next(w)
		if got := time.Since(start); got != time.Minute {
			t.Errorf("load after %v, want the period, 1m", got)
		}
		wantCauses(t, tr, map[Cause]int{CauseLoad: 1})
		w.Hint(CauseStale)
		synctest.Wait()
		tr, ok := poll(w)
		if !ok || tr.Fresh() || tr.Label() != LabelStale || !tr.First.IsZero() {
			t.Fatalf("stale trigger %v (%v): Fresh %v, label %q, First %v; want released at once, no First",
				tr.Causes, ok, tr.Fresh(), tr.Label(), tr.First)
		}
		// The consumer's own hints open no burst: the next event is
		// released at once, not held for the window.
		w.Hint(CauseLink)
		synctest.Wait()
		tr, ok = poll(w)
		if !ok || tr.Label() != LabelLink || tr.First.IsZero() {
			t.Fatalf("link after the stale round: %v (%v), First %v; want released at once with its First", tr.Causes, ok, tr.First)
		}
	})
}

// TestOwnCausesKeepResync: the load period and the consumer's own hints
// do not delay the resync, which waits for the kernel to be quiet.
func TestOwnCausesKeepResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := startWatcher(t, Options{Resync: 10 * time.Second, Load: 3 * time.Second}, nil, nil)
		start := time.Now()
		for {
			tr := next(w)
			if tr.Causes[CauseResync] > 0 {
				if got := time.Since(start); got != 10*time.Second {
					t.Errorf("resync after %v, want 10s", got)
				}
				return
			}
			if time.Since(start) > 10*time.Second {
				t.Fatal("no resync while load hints kept coming")
			}
			if tr.Causes[CauseLoad] > 0 {
				w.Hint(CauseStale) // the load round planned again
			}
		}
	})
}

// TestResyncIntoReleased: a resync that joins a trigger released but
// not taken yet still arms the next resync.
func TestResyncIntoReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The load hint is released just before the resync fires and
		// taken just after.
		w := startWatcher(t, Options{Resync: 10 * time.Second, Load: 10*time.Second - time.Millisecond}, nil, nil)
		time.Sleep(10*time.Second + time.Millisecond)
		synctest.Wait()
		wantCauses(t, next(w), map[Cause]int{CauseLoad: 1, CauseResync: 1})
		start := time.Now()
		for next(w).Causes[CauseResync] == 0 {
			if time.Since(start) > 30*time.Second {
				t.Fatal("no resync after the one that joined a released trigger")
			}
		}
	})
}
