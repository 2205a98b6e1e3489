// Package daemon is numairqd's main loop: on every trigger it rebuilds
// the topology snapshot and the IRQ inventory, plans, applies and
// publishes the result for metrics, so the placement stays true while
// CPUs, devices and other tools change the machine.
//
// The data flows one way, in Round:
//
//	sysfs/procfs -> topology.Snapshot + inventory -> policy.Plan -> apply -> metrics
package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
)

// Notifier receives sd_notify(3) states ("READY=1", "STATUS=..."). The
// command passes one backed by go-systemd; outside systemd it is a
// no-op. Tests record the states.
type Notifier interface {
	Notify(state string)
}

// Options configure a Daemon.
type Options struct {
	// Sysfs and Procfs are the roots to read ("/sys", "/proc").
	Sysfs, Procfs string
	// ConfigPath is the YAML config; "" means the built-in defaults.
	// With ConfigOptional, a missing file also means the defaults (the
	// default path need not exist); a file that exists must parse.
	ConfigPath     string
	ConfigOptional bool
	// Listen overrides the config's listen address when not empty.
	Listen string
	// DryRun plans and counts, and writes nothing.
	DryRun bool
	// Writer writes affinities; nil means apply.ProcWriter on Procfs.
	Writer apply.Writer
	// Events enables the kernel uevent and rtnetlink sources; without
	// them the daemon still rescans on resync, SIGHUP and config edits.
	Events bool
	Log    *zap.Logger
	Notify Notifier
}

// Daemon holds the state that lives across rounds. Its exported
// methods other than Run are for the one goroutine that runs rounds,
// except Config, Status and PlanJSON, which are safe from any goroutine.
type Daemon struct {
	opts    Options
	log     *zap.Logger
	topo    topology.Holder
	cfg     atomic.Pointer[config.Config]
	status  atomic.Pointer[metrics.Status]
	applier *apply.Applier
	metrics *metrics.Metrics
}

type nopNotifier struct{}

func (nopNotifier) Notify(string) {}

// New loads the config and prepares the daemon; it reads no sysfs yet.
// An invalid config is an error: at startup there is no old config to
// keep.
func New(opts Options) (*Daemon, error) {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.Notify == nil {
		opts.Notify = nopNotifier{}
	}
	if opts.Writer == nil {
		opts.Writer = apply.ProcWriter{Proc: opts.Procfs}
	}
	d := &Daemon{opts: opts, log: opts.Log}
	cfg, err := d.loadConfig()
	if err != nil {
		return nil, err
	}
	d.cfg.Store(cfg)
	d.applier = apply.New(opts.Writer, opts.Log, apply.Options{DryRun: opts.DryRun})
	d.metrics = metrics.New(d.status.Load, metrics.Options{PerIRQ: cfg.MetricsPerIRQ, Log: opts.Log})
	d.metrics.ConfigReload(true, time.Now())
	return d, nil
}

func (d *Daemon) loadConfig() (*config.Config, error) {
	if d.opts.ConfigPath == "" {
		return config.Default(), nil
	}
	if !d.opts.ConfigOptional {
		return config.Load(d.opts.ConfigPath)
	}
	cfg, err := config.LoadOrDefault(d.opts.ConfigPath)
	if err == nil && cfg.Source == "" {
		d.log.Info("no config file, using the defaults", zap.String("path", d.opts.ConfigPath))
	}
	return cfg, err
}

// Config is the config in force.
func (d *Daemon) Config() *config.Config { return d.cfg.Load() }

// Status is what the last round published, nil before the first.
func (d *Daemon) Status() *metrics.Status { return d.status.Load() }

// Metrics is the daemon's metrics registry and HTTP handler source.
func (d *Daemon) Metrics() *metrics.Metrics { return d.metrics }

// PlanJSON is the last plan as `numairqd plan --format json` prints it,
// encoded when asked for (a /plan request), not after every round.
func (d *Daemon) PlanJSON() ([]byte, bool) {
	st := d.status.Load()
	if st == nil || st.Plan == nil {
		return nil, false
	}
	doc, err := json.MarshalIndent(st.Plan.Doc(), "", "  ")
	return doc, err == nil
}

// RoundResult is what one round did. Read, Planned and Apply.Duration
// split Took into its phases, so a slow round says where it was slow.
type RoundResult struct {
	Plan    *policy.Plan
	Apply   apply.Result
	Took    time.Duration
	Read    time.Duration
	Planned time.Duration
}

// Round runs the pipeline once: read, plan, apply, publish. trigger
// labels the round in metrics; first, when not zero, is when the event
// that caused it arrived.
func (d *Daemon) Round(ctx context.Context, trigger string, first time.Time) (RoundResult, error) {
	start := time.Now()
	res, err := d.round(ctx)
	took := time.Since(start)
	res.Took = took
	d.metrics.Round(trigger, took)
	if err != nil {
		d.metrics.RoundFailed()
		d.log.Error("round failed", zap.String("trigger", trigger), zap.Error(err))
		return res, err
	}
	for kind, n := range res.Apply.ByKind {
		for range n {
			d.metrics.AffinityWrite(kind)
		}
	}
	for range res.Apply.DryRun {
		d.metrics.AffinityWrite("dry_run")
	}
	if !first.IsZero() {
		d.metrics.EventToApplied(time.Since(first))
	}
	d.metrics.SetTopologyGeneration(res.Plan.TopologyGeneration)
	d.status.Store(&metrics.Status{Plan: res.Plan, Failed: res.Apply.Failed, Round: time.Now()})
	level := zap.DebugLevel
	if res.Apply.Written+res.Apply.DryRun > 0 || len(res.Apply.Failed) > 0 {
		level = zap.InfoLevel
	}
	d.log.Log(level, "round done", zap.String("trigger", trigger), zap.Duration("took", took),
		zap.Duration("read", res.Read), zap.Duration("plan", res.Planned), zap.Duration("apply", res.Apply.Duration),
		zap.Uint64("topology_generation", res.Plan.TopologyGeneration),
		zap.Int("written", res.Apply.Written), zap.Int("unchanged", res.Apply.Unchanged),
		zap.Int("dry_run", res.Apply.DryRun), zap.Int("failed", len(res.Apply.Failed)), zap.Bool("stale", res.Apply.Stale))
	return res, nil
}

func (d *Daemon) round(ctx context.Context) (RoundResult, error) {
	start := time.Now()
	snap, inv, err := d.read()
	read := time.Since(start)
	if err != nil {
		return RoundResult{Read: read}, err
	}
	plan := policy.Compute(snap, d.applier.Annotate(inv), d.cfg.Load())
	planned := time.Since(start) - read
	return RoundResult{Plan: plan, Apply: d.applier.Apply(ctx, plan), Read: read, Planned: planned}, nil
}

// read builds a new snapshot and inventory. A CPU going on- or offline
// between the two reads makes them disagree (the inventory's
// /proc/interrupts columns are the online CPUs when it was read); read
// again, a few times, before planning on a mix.
func (d *Daemon) read() (*topology.Snapshot, *inventory.Inventory, error) {
	sysfs := topology.NewFS(d.opts.Sysfs)
	invFS := inventory.FS{Proc: d.opts.Procfs, Sys: d.opts.Sysfs}
	for attempt := 1; ; attempt++ {
		snap, err := sysfs.Read()
		if err != nil {
			d.metrics.Error("read_topology")
			return nil, nil, err
		}
		inv, err := invFS.Read()
		if err != nil {
			d.metrics.Error("read_inventory")
			return nil, nil, err
		}
		if inv.CPUs.Equal(snap.Online()) || attempt == 3 {
			if attempt == 3 {
				d.log.Warn("online CPUs changed while reading; planning on the last read",
					zap.String("sysfs_online", snap.Online().String()), zap.String("interrupts_cpus", inv.CPUs.String()))
			}
			return d.topo.Publish(snap), inv, nil
		}
	}
}

// Reload re-reads the config file. A config that fails to load is
// rejected with the file, line and reason, and the old one stays in
// force.
func (d *Daemon) Reload() error {
	cfg, err := d.loadConfig()
	if err != nil {
		d.metrics.ConfigReload(false, time.Now())
		d.metrics.Error("config")
		d.log.Error("config rejected, keeping the previous one", zap.Error(err))
		return err
	}
	old := d.cfg.Swap(cfg)
	d.metrics.ConfigReload(true, time.Now())
	d.metrics.SetPerIRQ(cfg.MetricsPerIRQ)
	if old.Listen != cfg.Listen || old.ResyncInterval != cfg.ResyncInterval ||
		old.CoalesceWindow != cfg.CoalesceWindow || old.CoalesceMaxDelay != cfg.CoalesceMaxDelay {
		d.log.Warn("listen, resync_interval and coalesce_* take effect at the next restart")
	}
	d.log.Info("config loaded", zap.String("summary", cfg.Summary()))
	return nil
}

// maxReplans bounds the immediate re-plans of settle, so a CPU that
// flaps cannot spin the loop.
const maxReplans = 3

// settle runs a round, and runs it again at once (a bounded number of
// times) while the apply showed the plan was made from stale inputs: a
// write found a CPU gone (EINVAL), or the kernel refused IRQs nobody knew
// were managed (on kernels before 6.12 a managed IRQ's smp_affinity is
// writable-looking 0644, so the first plan counted it as a movable queue
// and spread other devices' queues around it).
func (d *Daemon) settle(ctx context.Context, trigger string, first time.Time) (RoundResult, error) {
	for i := 0; ; i++ {
		res, err := d.Round(ctx, trigger, first)
		if err != nil || i == maxReplans || ctx.Err() != nil ||
			!res.Apply.Stale && res.Apply.ByKind[apply.KindManaged] == 0 {
			return res, err
		}
		trigger = "stale"
	}
}

// Oneshot runs one round (with settle's re-plans) and reports an error
// when an IRQ that is not managed by the kernel could not be placed.
func (d *Daemon) Oneshot(ctx context.Context) error {
	res, err := d.settle(ctx, "startup", time.Time{})
	if err != nil {
		return err
	}
	if n := len(res.Apply.Failed); n > 0 {
		return fmt.Errorf("%d IRQs could not be placed (%s)", n, failedSummary(res.Apply.Failed))
	}
	return nil
}

func failedSummary(failed map[int]string) string {
	kinds := map[string]int{}
	for _, k := range failed {
		kinds[k]++
	}
	return fmt.Sprint(kinds)
}
