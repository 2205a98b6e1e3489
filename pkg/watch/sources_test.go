package watch

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/nl"
)

func TestUeventPump(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake[Uevent]()
		w := startWatcher(t, Options{}, src, nil)
		src.send(Uevent{Action: "offline", Subsystem: "cpu", DevPath: "/devices/system/cpu/cpu5"}, nil)
		src.send(Uevent{Action: "remove", Subsystem: "queues"}, nil)
		src.send(Uevent{Action: "add", Subsystem: "machinecheck"}, nil)
		src.send(Uevent{}, fmt.Errorf("uevent: %w: sender port 99", nl.ErrNotKernel))
		src.send(Uevent{}, fmt.Errorf("uevent: %w", ErrOverflow))
		src.send(Uevent{}, fmt.Errorf("uevent: %w", kernfs.ErrMalformed))
		src.send(Uevent{}, fmt.Errorf("uevent: %w", ErrLibudev))
		src.send(Uevent{Action: "bind", Subsystem: "pci"}, nil)
		// Nobody reads: everything emitted merges into one trigger.
		time.Sleep(testMaxDelay)
		wantCauses(t, next(w), map[Cause]int{CauseUevent: 2, CauseLost: 1})
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
		wantCauses(t, next(w), map[Cause]int{CauseLost: 1})
		if err := w.Degraded(); !errors.Is(err, errBroken) || !strings.Contains(err.Error(), "uevent source") {
			t.Errorf("Degraded = %v, want the uevent source's %v", err, errBroken)
		}
		w.Hint(CauseSIGHUP)
		wantCauses(t, next(w), map[Cause]int{CauseSIGHUP: 1})
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
		step(nil, fmt.Errorf("rtnetlink: %w: sender port 5", nl.ErrNotKernel), nil)
		step(nil, fmt.Errorf("rtnetlink: %w", nl.ErrTruncated), map[Cause]int{CauseLost: 1})
		wantStats(t, w.Stats(),
			map[UeventKind]uint64{},
			map[string]uint64{"not_kernel": 1, "malformed": 1},
			map[string]uint64{"rtnetlink": 1})
	})
}
