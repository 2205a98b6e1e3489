package daemon

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/bans"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
)

// reporter logs what a round's State shows, each warning once: it keeps
// the last round's facts and logs what changed since.
type reporter struct {
	log             *zap.Logger
	metrics         *metrics.Metrics
	bans            bans.Bans       // last logged
	queueNotes      map[string]bool // queue notes warned of last round
	managedOnBanned string          // the last warning's key
	mismatched      map[int]string  // IRQ number: name@planned warned of
	fitProcs        func(deviceIRQs int)
	deviceIRQs      int // what fitProcs was last told
	// possible reads the possible CPUs, for warnSettings.
	possible func() cpumask.Mask
	cfg      *config.Config // the config warnSettings last warned of
	ignored  []string       // the irqbalance settings last warned of
}

// report logs st's changes, the round and its decisions, and tells
// fitProcs of a new device IRQ count.
func (r *reporter) report(st *state.State) {
	r.logBans(st)
	r.warnSettings(st)
	r.logManagedOnBanned(st)
	r.logQueueNotes(st)
	r.warnMismatched(st)
	logRound(r.log, st)
	logDecisions(r.log, st)
	if n := deviceIRQs(st); r.fitProcs != nil && n != r.deviceIRQs {
		r.deviceIRQs = n
		r.fitProcs(n)
	}
}

// deviceIRQs counts the movable IRQs.
func deviceIRQs(st *state.State) int {
	n := 0
	for _, q := range st.Inventory.IRQs {
		if q.Movable() {
			n++
		}
	}
	return n
}

// logBans reports unreadable bans and bans that changed, the IRQs and
// modules irqbalance's file bans among them.
func (r *reporter) logBans(st *state.State) {
	if st.BansErr != nil {
		r.metrics.Error(metrics.ErrBans)
		r.log.Warn("other tools' bans unreadable; keeping the previous ones", zap.Error(st.BansErr))
		return
	}
	b := st.Bans
	if b.EnvFile == r.bans.EnvFile && b.Env.Equal(r.bans.Env) && b.Default.Equal(r.bans.Default) && b.Partitions.Equal(r.bans.Partitions) &&
		b.Housekeeping.Equal(r.bans.Housekeeping) && maps.Equal(b.IRQs, r.bans.IRQs) && maps.Equal(b.Modules, r.bans.Modules) {
		return
	}
	r.bans = b
	r.log.Info("banned CPUs from other tools", zap.String("env_file", b.EnvFile),
		zap.Stringer("irqbalance_env", b.Env), zap.Stringer("default_smp_affinity", b.Default),
		zap.Stringer("isolated_partitions", b.Partitions), zap.Stringer("crio_housekeeping", b.Housekeeping),
		zap.Ints("irqbalance_banned_irqs", slices.Sorted(maps.Keys(b.IRQs))),
		zap.Strings("irqbalance_banned_modules", slices.Sorted(maps.Keys(b.Modules))))
}

// warnSettings warns of what the config and irqbalance's environment
// file ask that numairqd does not do here: once per config loaded, and
// again when the environment file's settings change.
func (r *reporter) warnSettings(st *state.State) {
	loaded := st.Config != r.cfg
	if loaded {
		r.cfg = st.Config
		for _, w := range policy.Warnings(st.Inventory, st.Config, r.possible()) {
			r.log.Warn(w)
		}
	}
	if st.BansErr == nil && (loaded || !slices.Equal(st.Bans.Ignored, r.ignored)) {
		r.ignored = st.Bans.Ignored
		for _, w := range r.ignored {
			r.log.Warn(w)
		}
	}
}

// logManagedOnBanned warns, once per set, of kernel-managed IRQs on
// banned CPUs: numairqd cannot move them, the operator can.
func (r *reporter) logManagedOnBanned(st *state.State) {
	qs := st.ManagedOnBanned()
	banned := st.Banned()
	var key strings.Builder
	if len(qs) > 0 {
		key.WriteString(banned.String())
	}
	for _, q := range qs {
		fmt.Fprintf(&key, " %d:%s", q.Number, q.Current)
	}
	if key.String() == r.managedOnBanned {
		return
	}
	r.managedOnBanned = key.String()
	if len(qs) == 0 {
		return
	}
	var first []string
	for _, q := range qs[:min(len(qs), 5)] {
		first = append(first, fmt.Sprintf("IRQ %d %s on %s", q.Number, q.Name, q.Current))
	}
	r.log.Warn("kernel-managed IRQs have banned CPUs and numairqd cannot move them; boot with isolcpus=managed_irq,CPUS to keep the kernel's spread off those CPUs",
		zap.Int("irqs", len(qs)), zap.Stringer("banned", banned), zap.Strings("first", first))
}

// logQueueNotes warns once of each queue netlink and the IRQ's name
// disagree on (netlink wins) and of each device's netlink error.
func (r *reporter) logQueueNotes(st *state.State) {
	seen := make(map[string]bool, len(r.queueNotes))
	for _, dev := range st.Plan.Devices {
		for _, q := range dev.IRQs {
			if q.QueueNote == "" {
				continue
			}
			key := q.Name + "\x00" + q.QueueNote
			seen[key] = true
			if !r.queueNotes[key] {
				r.log.Warn("netlink and the IRQ's name disagree on its queue; following netlink",
					zap.Int("irq", q.Number), zap.String("name", q.Name), zap.String("device", dev.PCI), zap.String("why", q.QueueNote))
			}
		}
	}
	for _, dev := range st.Inventory.Devices {
		if dev.NetQueuesErr == nil {
			continue
		}
		key := dev.PCI + "\x00" + dev.NetQueuesErr.Error()
		seen[key] = true
		if !r.queueNotes[key] {
			r.log.Warn("cannot ask netdev netlink which IRQ serves which queue; the IRQ names decide",
				zap.String("device", dev.PCI), zap.Error(dev.NetQueuesErr))
		}
	}
	r.queueNotes = seen
}

// warnMismatched warns once per IRQ and planned mask of an IRQ the
// kernel keeps outside its plan after every re-write.
func (r *reporter) warnMismatched(st *state.State) {
	next := map[int]string{}
	for _, dev := range st.Plan.Devices {
		for _, q := range dev.IRQs {
			key := q.Name + "@" + q.Planned.String()
			switch {
			case q.EffectiveState == policy.EffectiveMismatch && r.mismatched[q.Number] != key:
				r.log.Warn("the kernel keeps the IRQ outside its planned CPUs after every re-write; left there until the plan changes or the next fresh read",
					zap.Int("irq", q.Number), zap.String("name", q.Name), zap.Stringer("planned", q.Planned),
					zap.Stringer("effective", q.Effective), zap.Int("rewrites", policy.MaxRewrites))
				next[q.Number] = key
			case q.EffectiveState > policy.EffectiveVerified && r.mismatched[q.Number] == key:
				next[q.Number] = key
			}
		}
	}
	r.mismatched = next
}

// logRound logs a round at info when it wrote, failed or logged a new
// dry-run write; else at debug.
func logRound(log *zap.Logger, st *state.State) {
	if !st.Consistent {
		log.Warn("online CPUs changed while reading; planned on the last read",
			zap.Stringer("sysfs_online", st.Snapshot.Online()), zap.Stringer("interrupts_cpus", st.Inventory.CPUs))
	}
	if un := st.Plan.Unplaced(); len(un) > 0 {
		var why []string
		for _, q := range un[:min(len(un), 5)] {
			why = append(why, fmt.Sprintf("IRQ %d: %s", q.Number, q.Reason))
		}
		log.Warn("IRQs left where they are: they could not be placed", zap.Int("irqs", len(un)),
			zap.Stringer("allowed", st.Plan.Allowed), zap.Strings("first", why))
	}
	res := st.Apply
	level := zap.DebugLevel
	if res.Written+res.DryRunLogged+res.XPSWritten+res.NAPIWritten > 0 || len(res.Failed) > 0 {
		level = zap.InfoLevel
	}
	log.Log(level, "round done", zap.String("trigger", st.Trigger), zap.Stringer("read_depth", st.Depth), zap.Duration("took", st.Took()),
		zap.Duration("read", st.Machine.Took), zap.Duration("plan", st.Planning), zap.Duration("apply", st.Applying),
		zap.Uint64("generation", st.Generation),
		zap.Int("written", res.Written), zap.Int("unchanged", res.Unchanged),
		zap.Int("dry_run", res.DryRun), zap.Int("failed", len(res.Failed)), zap.Bool("stale", res.Stale),
		zap.Int("xps_written", res.XPSWritten), zap.Int("napi_threads_written", res.NAPIWritten))
}
