package watch

import (
	"maps"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

func TestScopeString(t *testing.T) {
	for s, want := range map[Scope]string{ScopeCPU: "cpu", ScopeDevices: "devices", ScopeAll: "all", Scope(9): "Scope(9)"} {
		if got := s.String(); got != want {
			t.Errorf("Scope(%d).String() = %q, want %q", uint8(s), got, want)
		}
	}
}

func TestScopeWidth(t *testing.T) {
	// The zero value reads everything: a Trigger{} misses nothing.
	if (Trigger{}).Scope != ScopeAll {
		t.Errorf("zero Trigger has scope %v, want all", Trigger{}.Scope)
	}
	unknown := Scope(9)
	tests := []struct {
		a, b, wider Scope
	}{
		{ScopeCPU, ScopeCPU, ScopeCPU},
		{ScopeCPU, ScopeDevices, ScopeDevices},
		{ScopeDevices, ScopeCPU, ScopeDevices},
		{ScopeDevices, ScopeDevices, ScopeDevices},
		{ScopeCPU, ScopeAll, ScopeAll},
		{ScopeAll, ScopeDevices, ScopeAll},
		{ScopeAll, ScopeAll, ScopeAll},
		// An unknown value is as wide as it gets, and reads as all.
		{unknown, ScopeCPU, ScopeAll},
		{ScopeDevices, unknown, ScopeAll},
	}
	for _, tt := range tests {
		if got := wider(tt.a, tt.b); got != tt.wider {
			t.Errorf("wider(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.wider)
		}
		if !tt.wider.Covers(tt.a) || !tt.wider.Covers(tt.b) {
			t.Errorf("%v does not cover %v and %v", tt.wider, tt.a, tt.b)
		}
	}
	order := []Scope{ScopeCPU, ScopeDevices, ScopeAll}
	for i, s := range order {
		for j, o := range order {
			if got := s.Covers(o); got != (i >= j) {
				t.Errorf("%v.Covers(%v) = %v, want %v", s, o, got, i >= j)
			}
		}
	}
	if !unknown.Covers(ScopeAll) || ScopeDevices.Covers(unknown) {
		t.Error("an unknown scope does not count as all")
	}
}

func TestCauseScope(t *testing.T) {
	want := map[Cause]Scope{
		CauseUevent: ScopeAll, // no subsystem: unknown
		CauseLink:   ScopeDevices,
		CauseLost:   ScopeAll,
		CauseResync: ScopeAll,
		CauseSIGHUP: ScopeAll,
		CauseConfig: ScopeAll,
		// A channel change frees and requests vectors.
		CauseChannels: ScopeDevices,
		Cause(200):    ScopeAll,
	}
	for c, s := range want {
		if got := causeScope(c); got != s {
			t.Errorf("scope of %v = %v, want %v", c, got, s)
		}
	}
}

func TestSubsystemScope(t *testing.T) {
	want := map[string]Scope{"cpu": ScopeCPU, "node": ScopeCPU, "memory": ScopeCPU, "pci": ScopeDevices, "net": ScopeDevices}
	if !maps.Equal(subsystemScope, want) {
		t.Errorf("subsystemScope = %v, want %v", subsystemScope, want)
	}
	// Every interesting subsystem has its own scope, none falls to all.
	subs := slices.Sorted(maps.Keys(interesting))
	if got := slices.Sorted(maps.Keys(subsystemScope)); !slices.Equal(got, subs) {
		t.Errorf("subsystems with a scope %q, interesting ones %q", got, subs)
	}
}

// TestScopeMerges checks the scope of the triggers hints give: each
// merged trigger has the widest of its hints' scopes.
func TestScopeMerges(t *testing.T) {
	cpu := Uevent{Action: "online", Subsystem: "cpu", DevPath: "/devices/system/cpu/cpu5"}
	mem := Uevent{Action: "offline", Subsystem: "memory", DevPath: "/devices/system/memory/memory40"}
	pci := Uevent{Action: "bind", Subsystem: "pci", DevPath: virtioPCI}
	net := Uevent{Action: "add", Subsystem: "net", DevPath: virtioPCI + "/virtio0/net/eth0"}
	tests := []struct {
		name    string
		uevents []Uevent
		hints   []Cause
		want    Scope
	}{
		{"cpu", []Uevent{cpu}, nil, ScopeCPU},
		{"cpu+memory", []Uevent{cpu, mem}, nil, ScopeCPU},
		{"pci", []Uevent{pci}, nil, ScopeDevices},
		{"net", []Uevent{net}, nil, ScopeDevices},
		{"cpu+pci", []Uevent{cpu, pci}, nil, ScopeDevices},
		{"pci+cpu", []Uevent{pci, cpu}, nil, ScopeDevices},
		{"link", nil, []Cause{CauseLink}, ScopeDevices},
		{"cpu+link", []Uevent{cpu}, []Cause{CauseLink}, ScopeDevices},
		{"channels", nil, []Cause{CauseChannels}, ScopeDevices},
		{"cpu+channels", []Uevent{cpu}, []Cause{CauseChannels}, ScopeDevices},
		{"channels+lost", nil, []Cause{CauseChannels, CauseLost}, ScopeAll},
		{"cpu+resync", []Uevent{cpu}, []Cause{CauseResync}, ScopeAll},
		{"pci+lost", []Uevent{pci}, []Cause{CauseLost}, ScopeAll},
		{"cpu+sighup", []Uevent{cpu, mem}, []Cause{CauseSIGHUP}, ScopeAll},
		{"link+config", nil, []Cause{CauseLink, CauseConfig}, ScopeAll},
		{"injected uevent", nil, []Cause{CauseUevent}, ScopeAll},
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
				if tr.Scope != tt.want {
					t.Errorf("Scope = %v, want %v (causes %v)", tr.Scope, tt.want, tr.Causes)
				}
			})
		})
	}
}

// TestEmitMergesScope checks that a trigger the consumer has not taken
// yet merges with the next into the wider scope, whichever came first.
func TestEmitMergesScope(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tt := range []struct{ first, second, want Scope }{
		{ScopeCPU, ScopeCPU, ScopeCPU},
		{ScopeCPU, ScopeDevices, ScopeDevices},
		{ScopeDevices, ScopeCPU, ScopeDevices},
		{ScopeAll, ScopeCPU, ScopeAll},
		{ScopeDevices, ScopeAll, ScopeAll},
	} {
		w, err := newWatcher(Options{}, openers{})
		if err != nil {
			t.Fatal(err)
		}
		w.emit(Trigger{Causes: map[Cause]int{CauseUevent: 1}, First: t0.Add(time.Second), Scope: tt.first})
		w.emit(Trigger{Causes: map[Cause]int{CauseUevent: 2, CauseLink: 1}, First: t0, Scope: tt.second})
		tr, ok := poll(w)
		if !ok {
			t.Fatal("no trigger")
		}
		if tr.Scope != tt.want {
			t.Errorf("%v then %v: Scope = %v, want %v", tt.first, tt.second, tr.Scope, tt.want)
		}
		wantCauses(t, tr, map[Cause]int{CauseUevent: 3, CauseLink: 1})
		if !tr.First.Equal(t0) {
			t.Errorf("First = %v, want the earlier %v", tr.First, t0)
		}
		if tr, ok := poll(w); ok {
			t.Errorf("second trigger %+v pending", tr)
		}
	}
}
