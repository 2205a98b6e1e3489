package watch

import (
	"maps"
	"testing"
)

// TestStatsBounded checks that Stats holds a fixed set of keys from the
// start, so that metrics labels stay bounded, and returns copies.
func TestStatsBounded(t *testing.T) {
	w, err := newWatcher(testOptions(), openers{})
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
	if want := map[string]uint64{"uevent": 0, "rtnetlink": 0, "ethtool": 0, "netdev": 0}; !maps.Equal(s.Overflows, want) {
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
