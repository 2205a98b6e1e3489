package watch

import (
	"maps"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

func TestCauseString(t *testing.T) {
	// The names are metric label values: they must not change.
	want := []string{"uevent", "link", "overflow", "resync", "sighup", "config", "channels", "bans", "netdev", "stale", "load", "verify"}
	var got []string
	for c := range numCauses {
		got = append(got, c.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("cause names = %q, want %q", got, want)
	}
	if s := Cause(200).String(); s != "Cause(200)" {
		t.Errorf("unknown cause String = %q", s)
	}
}

func TestLabels(t *testing.T) {
	// The trigger label values of numairqd_rounds_total, as docs/operations.md
	// lists them: they must not change.
	want := []string{"startup", "uevent", "link", "channels", "netdev", "resync", "sighup", "config", "bans", "overflow", "stale", "load", "verify"}
	got := Labels()
	if !slices.Equal(got, want) {
		t.Errorf("Labels() = %q, want %q", got, want)
	}
	for c := range numCauses {
		if !slices.Contains(got, c.String()) {
			t.Errorf("Labels() lacks %v's label", c)
		}
	}
	got[0] = "x"
	if Labels()[0] != LabelStartup {
		t.Error("Labels returns a shared slice")
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
		{map[Cause]int{CauseNetdev: 1, CauseLink: 2, CauseResync: 1}, "link", false},
		{map[Cause]int{CauseNetdev: 1, CauseResync: 1}, "netdev", false},
		{map[Cause]int{CauseChannels: 1, CauseNetdev: 1}, "channels", false},
		{map[Cause]int{CauseUevent: 1, CauseNetdev: 1}, "uevent", false},
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
	for c := range numCauses {
		if got := (Trigger{Causes: map[Cause]int{c: 1}}).Label(); got != c.String() {
			t.Errorf("Label of %v alone = %q", c, got)
		}
	}
}

// TestFresh checks which hints make a trigger Fresh, through the
// sources and Hint as the daemon's loop gets them: each merged trigger
// is Fresh if any of its hints is.
func TestFresh(t *testing.T) {
	cpu := Uevent{Action: "online", Subsystem: "cpu", DevPath: "/devices/system/cpu/cpu5"}
	node := Uevent{Action: "add", Subsystem: "node", DevPath: "/devices/system/node/node2"}
	mem := Uevent{Action: "offline", Subsystem: "memory", DevPath: "/devices/system/memory/memory40"}
	pci := Uevent{Action: "bind", Subsystem: "pci", DevPath: virtioPCI}
	net := Uevent{Action: "add", Subsystem: "net", DevPath: virtioPCI + "/virtio0/net/eth0"}
	tests := []struct {
		name    string
		uevents []Uevent
		hints   []Cause
		fresh   bool
	}{
		{"cpu", []Uevent{cpu}, nil, false},
		{"node+memory", []Uevent{node, mem}, nil, false},
		{"pci", []Uevent{pci}, nil, false},
		{"net", []Uevent{net}, nil, false},
		{"link", nil, []Cause{CauseLink}, false},
		{"channels", nil, []Cause{CauseChannels}, false},
		{"netdev", nil, []Cause{CauseNetdev}, false},
		{"cpu+pci+link+channels+netdev", []Uevent{cpu, pci}, []Cause{CauseLink, CauseChannels, CauseNetdev}, false},
		{"netdev+lost", nil, []Cause{CauseNetdev, CauseLost}, true},
		{"lost", nil, []Cause{CauseLost}, true},
		{"resync", nil, []Cause{CauseResync}, true},
		{"sighup", nil, []Cause{CauseSIGHUP}, true},
		{"config", nil, []Cause{CauseConfig}, true},
		{"bans", nil, []Cause{CauseBans}, true},
		{"unknown", nil, []Cause{Cause(200)}, true},
		{"injected uevent", nil, []Cause{CauseUevent}, true},
		{"cpu+resync", []Uevent{cpu}, []Cause{CauseResync}, true},
		{"pci+lost", []Uevent{pci}, []Cause{CauseLost}, true},
		{"channels+lost", nil, []Cause{CauseChannels, CauseLost}, true},
		{"link+config", nil, []Cause{CauseLink, CauseConfig}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newFake[Uevent]()
				w := startWatcher(t, Options{}, src, nil)
				for _, u := range tt.uevents {
					src.send(u, nil)
				}
				synctest.Wait()
				for _, c := range tt.hints {
					w.Hint(c)
				}
				// Nobody reads: whatever is emitted merges into one.
				time.Sleep(2 * testMaxDelay)
				tr, ok := poll(w)
				if !ok {
					t.Fatal("no trigger")
				}
				if tr.Fresh() != tt.fresh {
					t.Errorf("Fresh = %v, want %v (causes %v)", tr.Fresh(), tt.fresh, tr.Causes)
				}
			})
		})
	}
	// A trigger not made by the Watcher trusts no cache.
	if !(Trigger{}).Fresh() || !(Trigger{Causes: map[Cause]int{CauseLink: 1}}).Fresh() {
		t.Error("a Trigger built outside the Watcher is not fresh")
	}
}

// TestAccumulatorFresh checks that the hints the consumer has not taken
// make one trigger, Fresh if any hint is, First the earliest.
func TestAccumulatorFresh(t *testing.T) {
	for _, tt := range []struct{ first, second, fresh bool }{
		{false, false, false},
		{false, true, true},
		{true, false, true},
		{true, true, true},
	} {
		w, err := newWatcher(testOptions(), openers{})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		w.hint(CauseUevent, !tt.first, false)
		w.hint(CauseUevent, !tt.second, false)
		w.hint(CauseLink, true, false)
		if _, ok := w.Take(); ok {
			t.Fatal("took a trigger the debouncer did not release")
		}
		w.released = true
		tr, ok := w.Take()
		if !ok {
			t.Fatal("no trigger")
		}
		if tr.Fresh() != tt.fresh {
			t.Errorf("fresh %v then %v: Fresh = %v, want %v", tt.first, tt.second, tr.Fresh(), tt.fresh)
		}
		wantCauses(t, tr, map[Cause]int{CauseUevent: 2, CauseLink: 1})
		if tr.First.Before(t0) || tr.First.After(time.Now()) {
			t.Errorf("First = %v, want the first hint's arrival", tr.First)
		}
		if tr, ok := w.Take(); ok {
			t.Errorf("second trigger %+v pending", tr)
		}
	}
}

// TestInterestingSubsystems pins the subsystems whose uevents leave the
// consumer's caches valid (see interesting): one added must be checked.
func TestInterestingSubsystems(t *testing.T) {
	want := []string{"cpu", "memory", "net", "node", "pci"}
	if got := slices.Sorted(maps.Keys(interesting)); !slices.Equal(got, want) {
		t.Errorf("interesting subsystems %q, want %q", got, want)
	}
}
