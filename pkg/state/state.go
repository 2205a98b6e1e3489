// Package state is what numairqd publishes: a Store holds the newest
// State of a round, swapped in whole through one atomic pointer
// (RCU-style), so HTTP handlers and metrics collectors load it at any
// time, without locks, and never see parts of two rounds.
package state

import (
	"sync/atomic"
	"time"

	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/policy"
)

// State is what one round read, planned and wrote. A published State is
// never modified.
type State struct {
	// Generation counts published states: 1 for the first round, +1 for
	// every round after. Store.Publish sets it.
	Generation uint64
	machine.Machine
	Plan *policy.Plan
	// Apply is the outcome of the round's writes.
	Apply apply.Result
	// Planning and Applying are how long the plan and the writes took
	// (Machine.Took the read).
	Planning, Applying time.Duration
	// Trigger is what caused the round ("startup", "uevent", ...).
	Trigger string
	// Config is the config the round planned with, before the bans of
	// other tools were added (Machine.Config): /status tells a CPU
	// banned_cpus bans from one isolcpus or cri-o does. Nil in tests
	// that plan without one.
	Config *config.Config
	// DryRun says the round wrote nothing (numairqd run --dry-run).
	DryRun bool
	// Finished is when the round ended.
	Finished time.Time
}

// Took is the whole round: read, plan and apply.
func (s *State) Took() time.Duration { return s.Machine.Took + s.Planning + s.Applying }

// Banned is the online CPUs the plan does not allow: banned_cpus,
// isolated and nohz_full CPUs, and cri-o's or tuned's bans.
func (s *State) Banned() cpumask.Mask { return s.Snapshot.Online().AndNot(s.Plan.Allowed) }

// ManagedOnBanned is the kernel-managed IRQs whose affinity has a CPU of
// Banned: numairqd cannot move them (only isolcpus=managed_irq keeps the
// kernel's spread off CPUs), so they are reported, not planned.
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
// State. s must be a whole round (Plan, Snapshot and Inventory set) and
// must not be changed afterwards.
func (st *Store) Publish(s *State) *State {
	var gen uint64
	if prev := st.cur.Load(); prev != nil {
		gen = prev.Generation
	}
	s.Generation = gen + 1
	st.cur.Store(s)
	return s
}
