// Package machine reads what numairqd plans from: the CPU topology, the
// IRQ inventory and other tools' bans, as one consistent value,
// re-reading only what the kernel shows has changed.
package machine

import (
	"errors"
	"time"

	"github.com/numairqd/numairqd/pkg/bans"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
)

// Roots names the trees to read. Etc is where irqbalance_env_file: auto
// looks ("" looks nowhere); Netdev answers netdev netlink (nil: not
// asked).
type Roots struct {
	Sys, Proc, Etc string
	Netdev         inventory.Netdev
}

// Machine is one read: the topology and the inventory, taken while the
// same CPUs were online, and the bans of other tools.
type Machine struct {
	Snapshot  *topology.Snapshot
	Inventory *inventory.Inventory
	// Consistent is false when CPUs kept changing while reading.
	Consistent bool
	Depth      inventory.Depth // how much of the inventory was re-read
	// Bans are other tools' banned CPUs; BansErr is why this read
	// failed, the previous bans kept.
	Bans    bans.Bans
	BansErr error
	Took    time.Duration
}

// ToolBans are the bans of other tools, as the planner takes them.
func (m Machine) ToolBans() []policy.ToolBan {
	var tb []policy.ToolBan
	if b := m.Bans; !b.Env.IsEmpty() || len(b.IRQs)+len(b.Modules) > 0 {
		tb = append(tb, policy.ToolBan{Source: policy.BanEnvFile, Path: b.EnvFile, CPUs: b.Env, IRQs: b.IRQs, Modules: b.Modules})
	}
	if !m.Bans.Default.IsEmpty() {
		tb = append(tb, policy.ToolBan{Source: policy.BanDefaultAffinity, CPUs: m.Bans.Default})
	}
	if !m.Bans.Partitions.IsEmpty() {
		tb = append(tb, policy.ToolBan{Source: policy.BanIsolatedPartitions, CPUs: m.Bans.Partitions})
	}
	return tb
}

// ReadError is a failed read of Source, "topology" or "inventory".
type ReadError struct {
	Source string
	Err    error
}

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// readAttempts bounds the re-reads while CPUs keep changing.
const readAttempts = 3

// Reader reads the machine round after round, from one goroutine.
type Reader struct {
	roots  Roots
	topo   *topology.Reader
	inv    *inventory.Reader
	bans   bans.Bans // the last read well
	banned bool      // a read was tried
}

// NewReader returns a Reader of r that has read nothing yet.
func NewReader(r Roots) *Reader {
	return &Reader{roots: r, topo: topology.NewReader(topology.NewFS(r.Sys)),
		inv: inventory.NewReader(inventory.FS{Proc: r.Proc, Sys: r.Sys, Netdev: r.Netdev})}
}

// Read reads the machine, the inventory at least as deep as least.
// While CPUs change (topology and inventory disagree, or a CPU is in no
// node) it reads afresh up to readAttempts times, then returns a mix
// (Consistent false) or the error. Fresh and first reads read the bans
// cfg asks for; the IRQs in verify get their effective CPUs read.
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

// read is one attempt: the topology, then the inventory with its online
// CPUs, checked again afterwards when /proc/interrupts was not read.
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

// readBans reads the bans cfg asks for; on error it keeps the previous.
func (r *Reader) readBans(cfg *config.Config, online cpumask.Mask) error {
	var b bans.Bans
	b.EnvFile = bans.EnvFile(cfg.IrqbalanceEnvFile, r.roots.Etc, func(p string) bool { _, err := kernfs.Stat(p); return err == nil })
	var err error
	if b.EnvFile != "" {
		var e bans.Env
		if e, err = bans.ReadEnv(b.EnvFile); err != nil {
			return err
		}
		b.Env, b.IRQs, b.Modules, b.Ignored = e.CPUs, e.IRQs, e.Modules, e.Ignored
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
	if cfg.IsolatedPartitions {
		if b.Partitions, err = bans.ReadPartitions(r.roots.Sys); err != nil {
			return err
		}
		if irq := b.Env.Or(b.Default); b.Partitions.Intersects(irq) {
			parts, err := bans.ListPartitions(r.roots.Sys, b.Partitions)
			if err != nil {
				return err
			}
			b.Housekeeping = bans.Housekeeping(parts, irq)
			b.Partitions = b.Partitions.AndNot(b.Housekeeping)
		}
	}
	r.bans = b
	return nil
}

// Read reads the whole machine once (`numairqd plan`).
func Read(r Roots, cfg *config.Config) (Machine, error) {
	return NewReader(r).Read(cfg, inventory.DepthAll, nil)
}
