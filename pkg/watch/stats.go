//go:build linux

package watch

import "maps"

// UeventKind is a uevent's subsystem and action.
type UeventKind struct{ Subsystem, Action string }

// Dropped and Overflows keys of Stats.
const (
	dropNotKernel   = "not_kernel"
	dropMalformed   = "malformed"
	sourceUevent    = "uevent"
	sourceRtnetlink = "rtnetlink"
	sourceEthtool   = "ethtool"
	sourceNetdev    = "netdev"
)

// Stats are the Watcher's cumulative counters; every key is present
// from New on, so that a scrape shows every series.
type Stats struct {
	Uevents   map[UeventKind]uint64 // the Interesting uevents, by kind
	Dropped   map[string]uint64     // discarded: not_kernel, malformed
	Overflows map[string]uint64     // ENOBUFS, by source
}

func newStats() Stats {
	s := Stats{
		Uevents:   make(map[UeventKind]uint64),
		Dropped:   map[string]uint64{dropNotKernel: 0, dropMalformed: 0},
		Overflows: map[string]uint64{sourceUevent: 0, sourceRtnetlink: 0, sourceEthtool: 0, sourceNetdev: 0},
	}
	for sub, actions := range interesting {
		for _, a := range actions {
			s.Uevents[UeventKind{sub, a}] = 0
		}
	}
	return s
}

// Stats returns copies of the counters; it is safe from any goroutine.
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Stats{
		Uevents:   maps.Clone(w.stats.Uevents),
		Dropped:   maps.Clone(w.stats.Dropped),
		Overflows: maps.Clone(w.stats.Overflows),
	}
}

// count increments m[key] under the lock; m is one of w.stats' maps.
func (w *Watcher) count(m map[string]uint64, key string) {
	w.mu.Lock()
	m[key]++
	w.mu.Unlock()
}
