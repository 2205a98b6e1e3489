// Package machine reads what numairqd plans from: the CPU topology, the
// IRQ inventory and the CPUs other tools banned, as one consistent
// value. It keeps what it read last and re-reads what the kernel shows
// has changed (the inventory's keyed cache, the topology's per-CPU
// facts); a caller only says how deep it must look at least.
package machine

import (
	"errors"
	"os"
	"time"

	"github.com/numairqd/numairqd/pkg/bans"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
)

// Roots names the sysfs and procfs trees to read: "/sys" and "/proc"
// on a host, a fixture tree in tests. Etc is where irqbalance_env_file:
// auto looks for irqbalance's environment file ("/etc" on a host; ""
// looks nowhere). Netdev is netdev netlink's view of the queues
// (netdev.Kernel on a host; nil: not asked, see inventory.FS).
type Roots struct {
	Sys, Proc, Etc string
	Netdev         inventory.Netdev
}

// Machine is one read: the topology and the inventory, taken while the
// same CPUs were online, and the bans of other tools.
type Machine struct {
	Snapshot  *topology.Snapshot
	Inventory *inventory.Inventory
	// Consistent is false when CPUs kept changing while reading and the
	// last read is returned anyway.
	Consistent bool
	// Depth is how much of the inventory was re-read.
	Depth inventory.Depth
	// Bans are the CPUs other tools banned (irqbalance's environment
	// file, default_smp_affinity). BansErr is why they could not be
	// read this time: the previous bans were kept.
	Bans    bans.Bans
	BansErr error
	// Took is how long the read took.
	Took time.Duration
}

// ToolBans are the bans of other tools, as the planner takes them.
func (m Machine) ToolBans() []policy.ToolBan {
	var tb []policy.ToolBan
	if !m.Bans.Env.IsEmpty() {
		tb = append(tb, policy.ToolBan{Source: policy.BanEnvFile, Path: m.Bans.EnvFile, CPUs: m.Bans.Env})
	}
	if !m.Bans.Default.IsEmpty() {
		tb = append(tb, policy.ToolBan{Source: policy.BanDefaultAffinity, CPUs: m.Bans.Default})
	}
	return tb
}

// ReadError is a failed read; Source is the reader that failed,
// "topology" or "inventory".
type ReadError struct {
	Source string
	Err    error
}

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// readAttempts bounds the re-reads while CPUs keep changing.
const readAttempts = 3

// Reader reads the machine round after round. A Reader is for one
// goroutine.
type Reader struct {
	roots Roots
	topo  *topology.Reader
	inv   *inventory.Reader
	// bans are the last bans read well; banned says a read was tried.
	bans   bans.Bans
	banned bool
}

// NewReader returns a Reader of r that has read nothing yet.
func NewReader(r Roots) *Reader {
	return &Reader{roots: r, topo: topology.NewReader(topology.NewFS(r.Sys)),
		inv: inventory.NewReader(inventory.FS{Proc: r.Proc, Sys: r.Sys, Netdev: r.Netdev})}
}

// Read reads the machine, the inventory at least as deep as least
// (inventory.Reader.Read): inventory.DepthAll trusts nothing kept, as
// the resync, lost events and reloads ask. A CPU going on- or offline
// while reading makes the topology and the inventory disagree, or
// leaves an online CPU in no node (topology.NoNodeError), so it reads
// again afresh, up to readAttempts times, before returning a mix
// (Consistent false) or the error. The bans are read by fresh reads and the first;
// cfg says which. verify are the masks of the IRQs whose writes are
// being verified (policy.Verifies.Masks): their effective CPUs are read
// too, and only theirs (inventory.FS.ReadEffective).
func (r *Reader) Read(cfg *config.Config, least inventory.Depth, verify map[int]cpumask.Mask) (Machine, error) {
	start := time.Now()
	var m Machine
	var noNode *topology.NoNodeError
	for i := 1; ; i++ {
		var err error
		m, err = r.read(least)
		if err != nil && (i == readAttempts || !errors.As(err, &noNode)) {
			return Machine{Took: time.Since(start)}, err
		}
		if err == nil && (m.Consistent || i == readAttempts) {
			break
		}
		least = inventory.DepthAll // whatever was kept may predate the CPU change
	}
	if least == inventory.DepthAll || !r.banned {
		r.banned = true
		m.BansErr = r.readBans(cfg, m.Snapshot.Online())
	}
	m.Bans = r.bans
	if len(verify) > 0 {
		fsys := inventory.FS{Proc: r.roots.Proc, Sys: r.roots.Sys}
		m.Inventory = m.Inventory.WithEffective(fsys.ReadEffective(verify))
	}
	m.Took = time.Since(start)
	return m, nil
}

// read is one attempt: the topology, then the inventory with the
// topology's online CPUs, which it takes as its own when it reads no
// /proc/interrupts; they are then checked to be still online after it.
func (r *Reader) read(least inventory.Depth) (Machine, error) {
	if least == inventory.DepthAll {
		r.topo.Forget()
	}
	s, err := r.topo.Read()
	if err != nil {
		return Machine{}, &ReadError{"topology", err}
	}
	online := s.Online()
	inv, depth, err := r.inv.Read(online, least)
	if err != nil {
		return Machine{}, &ReadError{"inventory", err}
	}
	cpus := inv.CPUs
	if depth == inventory.DepthAffinities {
		if cpus, err = r.topo.Online(); err != nil {
			return Machine{}, &ReadError{"topology", err}
		}
	}
	return Machine{Snapshot: s, Inventory: inv, Depth: depth, Consistent: cpus.Equal(online)}, nil
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

// Read reads the whole machine once, for a command that runs one round
// (`numairqd plan`).
func Read(r Roots, cfg *config.Config) (Machine, error) {
	return NewReader(r).Read(cfg, inventory.DepthAll, nil)
}
