// Package state is numairqd's pipeline and what it publishes: Plan reads
// sysfs and procfs and plans (the daemon's rounds and `numairqd plan`
// both call it), and a Store holds the newest State of a round, swapped
// in whole through one atomic pointer (RCU-style): HTTP handlers and
// metrics collectors load it at any time, without locks, and never see
// parts of two rounds.
package state

import (
	"os"
	"sync/atomic"
	"time"

	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/bans"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
	"github.com/numairqd/numairqd/pkg/watch"
)

// Roots names the sysfs and procfs trees to read: "/sys" and "/proc"
// on a host, a fixture tree in tests. Etc is where irqbalance_env_file:
// auto looks for irqbalance's environment file ("/etc" on a host; ""
// looks nowhere).
type Roots struct {
	Sys, Proc, Etc string
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

// Reader reads the machine round after round. What a round re-reads
// follows from its trigger's scope: after a CPU event the topology
// (without the SMT siblings of CPUs seen before: topology.Reader) and
// the affinities of the device IRQs, after a device event also
// /proc/interrupts and the devices, otherwise everything afresh (see
// inventory.Reader). A Reader is for one goroutine.
type Reader struct {
	roots Roots
	topo  *topology.Reader
	inv   *inventory.Reader
	// bans are the last bans read well; banned says a read was tried
	// (the first round reads them whatever its scope).
	bans   bans.Bans
	banned bool
}

// NewReader returns a Reader of r that has read nothing yet: its first
// read is a whole one whatever the scope.
func NewReader(r Roots) *Reader {
	return &Reader{roots: r, topo: topology.NewReader(topology.NewFS(r.Sys)), inv: inventory.NewReader(inventory.FS{Proc: r.Proc, Sys: r.Sys})}
}

// Read builds a snapshot and an inventory, re-reading what scope says
// can have changed; changed names the PCI devices whose kept facts must
// be dropped (watch.Trigger.Devices). A CPU going on- or offline between
// the two reads makes them disagree, so it reads again, up to
// readAttempts times, before returning a mix; consistent reports whether
// they agree. The inventory's CPUs are those of /proc/interrupts, or,
// when only affinities were re-read, the online CPUs read once more
// after them.
func (r *Reader) Read(scope watch.Scope, changed []string) (m Machine, consistent bool, err error) {
	m, consistent, _, err = r.read(scope, changed)
	return m, consistent, err
}

// read is Read that also returns the scope of its last attempt, which
// widens to ScopeAll when CPUs changed while reading.
func (r *Reader) read(scope watch.Scope, changed []string) (m Machine, consistent bool, read watch.Scope, err error) {
	for range readAttempts {
		if scope != watch.ScopeCPU && scope != watch.ScopeDevices {
			r.topo.Forget() // ScopeAll trusts nothing kept
		}
		if m.Snapshot, err = r.topo.Read(); err != nil {
			return Machine{}, false, scope, &ReadError{"topology", err}
		}
		cpus := m.Snapshot.Online()
		switch scope {
		case watch.ScopeCPU:
			m.Inventory, err = r.inv.Affinities(cpus)
			if err == nil && m.Inventory.CPUs.Equal(cpus) {
				// The inventory took the snapshot's CPUs: check that
				// they were still online after the affinities.
				var now cpumask.Mask
				if now, err = r.topo.Online(); err != nil {
					return Machine{}, false, scope, &ReadError{"topology", err}
				}
				if !now.Equal(cpus) {
					continue
				}
			}
		case watch.ScopeDevices:
			m.Inventory, err = r.inv.Refresh(changed)
		default:
			m.Inventory, err = r.inv.Read()
		}
		if err != nil {
			return Machine{}, false, scope, &ReadError{"inventory", err}
		}
		if m.Inventory.CPUs.Equal(cpus) {
			return m, true, scope, nil
		}
		// Whatever was kept may predate the CPU change: read it all.
		scope = watch.ScopeAll
	}
	return m, false, scope, nil
}

// Planned is the read-and-plan half of a round: what was read, the plan
// made from it, and how long each took.
type Planned struct {
	Machine
	Plan *policy.Plan
	// Consistent is false when CPUs kept changing while reading and the
	// plan was made from the last read anyway.
	Consistent bool
	// Scope is how much was re-read: the trigger's scope, or ScopeAll
	// when CPUs changed while reading.
	Scope          watch.Scope
	Read, Planning time.Duration
	// Bans are the CPUs other tools banned (irqbalance's environment
	// file, default_smp_affinity), added to the config's banned_cpus
	// for this plan. BansErr is why they could not be read this time:
	// the previous bans were kept.
	Bans    bans.Bans
	BansErr error
}

// Plan is the pipeline up to the plan: Read with scope and changed,
// then policy.Compute with cfg, the refusals the caller's applier has
// met (nil for none) and the loads and held placement of bal. The bans
// of other tools are re-read with everything else (ScopeAll): they
// change with a pod's start or stop, which rewrites the environment
// file, and the daemon's watch of that file asks for such a round.
func (r *Reader) Plan(scope watch.Scope, changed []string, cfg *config.Config, refused policy.Refusals, bal policy.Balancing) (Planned, error) {
	start := time.Now()
	m, consistent, scope, err := r.read(scope, changed)
	if err != nil {
		return Planned{Scope: scope, Read: time.Since(start)}, err
	}
	var bansErr error
	if scope == watch.ScopeAll || !r.banned {
		r.banned = true
		bansErr = r.readBans(cfg, m.Snapshot.Online())
	}
	read := time.Since(start)
	if all := r.bans.All(); !all.IsEmpty() {
		c := *cfg
		c.BannedCPUs = c.BannedCPUs.Or(all)
		cfg = &c
	}
	p := policy.Compute(m.Snapshot, m.Inventory, cfg, refused, bal)
	return Planned{Machine: m, Plan: p, Consistent: consistent, Scope: scope, Read: read, Planning: time.Since(start) - read,
		Bans: r.bans, BansErr: bansErr}, nil
}

// readBans reads the bans cfg asks for; on an error it keeps the
// previous ones (none before the first good read).
func (r *Reader) readBans(cfg *config.Config, online cpumask.Mask) error {
	var b bans.Bans
	b.EnvFile = bans.EnvFile(cfg.IrqbalanceEnvFile, r.roots.Etc, func(p string) bool { _, err := os.Stat(p); return err == nil })
	var err error
	if b.EnvFile != "" {
		if b.Env, err = bans.ReadEnv(b.EnvFile); err != nil {
			return err
		}
	}
	honor := b.EnvFile != ""
	if cfg.HonorDefaultAffinity != nil {
		honor = *cfg.HonorDefaultAffinity
	}
	if honor {
		if b.Default, err = bans.ReadDefaultAffinity(r.roots.Proc, online); err != nil {
			return err
		}
	}
	r.bans = b
	return nil
}

// Plan reads the whole machine once and plans, for a command that runs
// one round (`numairqd plan`).
func Plan(r Roots, cfg *config.Config, refused policy.Refusals, bal policy.Balancing) (Planned, error) {
	return NewReader(r).Plan(watch.ScopeAll, nil, cfg, refused, bal)
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
