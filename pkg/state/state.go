// Package state is numairqd's pipeline and what it publishes: Plan reads
// sysfs and procfs and plans (the daemon's rounds and `numairqd plan`
// both call it), and a Store holds the newest State of a round, swapped
// in whole through one atomic pointer (RCU-style): HTTP handlers and
// metrics collectors load it at any time, without locks, and never see
// parts of two rounds.
package state

import (
	"sync/atomic"
	"time"

	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
)

// Roots names the sysfs and procfs trees to read: "/sys" and "/proc"
// on a host, a fixture tree in tests.
type Roots struct {
	Sys, Proc string
}

// Machine is one read of the machine: the CPU topology and the IRQ
// inventory, taken while the same CPUs were online.
type Machine struct {
	Snapshot  *topology.Snapshot
	Inventory *inventory.Inventory
}

// ReadError is a failed read; Source is the reader that failed,
// "topology" or "inventory".
type ReadError struct {
	Source string
	Err    error
}

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// readAttempts bounds Read's re-reads while CPUs keep changing.
const readAttempts = 3

// Read builds a snapshot and an inventory. A CPU going on- or offline
// between the two reads makes them disagree (the inventory's
// /proc/interrupts columns are the CPUs online when it was read), so it
// reads again, up to readAttempts times, before returning a mix;
// consistent reports whether they agree.
func Read(r Roots) (m Machine, consistent bool, err error) {
	topo, inv := topology.NewFS(r.Sys), inventory.FS{Proc: r.Proc, Sys: r.Sys}
	for range readAttempts {
		if m.Snapshot, err = topo.Read(); err != nil {
			return Machine{}, false, &ReadError{"topology", err}
		}
		if m.Inventory, err = inv.Read(); err != nil {
			return Machine{}, false, &ReadError{"inventory", err}
		}
		if m.Inventory.CPUs.Equal(m.Snapshot.Online()) {
			return m, true, nil
		}
	}
	return m, false, nil
}

// Planned is the read-and-plan half of a round: what was read, the plan
// made from it, and how long each took.
type Planned struct {
	Machine
	Plan *policy.Plan
	// Consistent is false when CPUs kept changing while reading and the
	// plan was made from the last read anyway.
	Consistent     bool
	Read, Planning time.Duration
}

// Plan is the pipeline up to the plan: Read, then policy.Compute with
// cfg and the refusals the caller's applier has met (nil for none).
func Plan(r Roots, cfg *config.Config, refused policy.Refusals) (Planned, error) {
	start := time.Now()
	m, consistent, err := Read(r)
	read := time.Since(start)
	if err != nil {
		return Planned{Read: read}, err
	}
	p := policy.Compute(m.Snapshot, m.Inventory, cfg, refused)
	return Planned{Machine: m, Plan: p, Consistent: consistent, Read: read, Planning: time.Since(start) - read}, nil
}

// State is what one round read, planned and did. A published State is
// never modified.
type State struct {
	// Generation counts published states: 1 for the first round, +1 for
	// every round after. Store.Publish sets it.
	Generation uint64
	Planned
	// Apply is the outcome of the round's writes; Applying how long
	// they took.
	Apply    apply.Result
	Applying time.Duration
	// Trigger is what caused the round ("startup", "uevent", ...).
	Trigger string
	// Finished is when the round ended.
	Finished time.Time
}

// Took is the whole round: read, plan and apply.
func (s *State) Took() time.Duration { return s.Read + s.Planning + s.Applying }

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
