// Package state is what numairqd publishes: a Store holds the newest
// State of a round behind one atomic pointer, so readers never lock and
// never see parts of two rounds.
package state

import (
	"sync/atomic"
	"time"

	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/fight"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/policy"
)

// State is what one round read, planned and wrote; never modified once
// published.
type State struct {
	Generation uint64 // 1 for the first round, +1 each; Publish sets it
	machine.Machine
	Plan  *policy.Plan
	Apply apply.Result // the outcome of the round's writes
	// Planning and Applying are how long the plan and the writes took.
	Planning, Applying time.Duration

	Trigger  string         // what caused the round ("startup", "uevent", ...)
	Config   *config.Config // the file's config; nil in some tests
	DryRun   bool           // the round wrote nothing: mode observe or --dry-run
	Finished time.Time      // when the round ended
	// Fights are the IRQs another writer keeps moving, after the round.
	Fights []fight.Fight
}

// Mode is the round's mode: observe when it wrote nothing, else enforce.
func (s *State) Mode() config.Mode {
	if s.DryRun {
		return config.ModeObserve
	}
	return config.ModeEnforce
}

// Took is the whole round: read, plan and apply.
func (s *State) Took() time.Duration { return s.Machine.Took + s.Planning + s.Applying }

// Banned is the online CPUs the plan does not allow.
func (s *State) Banned() cpumask.Mask { return s.Snapshot.Online().AndNot(s.Plan.Allowed) }

// ManagedOnBanned is the kernel-managed IRQs whose affinity has a CPU of
// Banned, which numairqd cannot move.
func (s *State) ManagedOnBanned() []policy.IRQ {
	banned := s.Banned()
	if banned.IsEmpty() {
		return nil
	}
	var out []policy.IRQ
	for _, d := range s.Plan.Devices {
		for _, q := range d.IRQs {
			if q.Managed && q.Current.Intersects(banned) {
				out = append(out, q)
			}
		}
	}
	return out
}

// Doc is the JSON form served at /plan: the plan with the generation.
func (s *State) Doc() policy.Doc {
	doc := s.Plan.Doc()
	doc.Generation = s.Generation
	return doc
}

// Store holds the newest State. Publish is for one writer (the daemon's
// loop); Load is safe from any goroutine.
type Store struct {
	cur atomic.Pointer[State]
}

// Load returns the newest State, nil before the first Publish.
func (st *Store) Load() *State { return st.cur.Load() }

// Publish stamps s with the next generation and makes it the newest
// State. s must be a whole round, never changed afterwards.
func (st *Store) Publish(s *State) *State {
	var gen uint64
	if prev := st.cur.Load(); prev != nil {
		gen = prev.Generation
	}
	s.Generation = gen + 1
	st.cur.Store(s)
	return s
}
