// Package daemon is numairqd's main loop: on every trigger it reads the
// machine, plans, applies the plan and publishes the round's State, so
// the placement stays true while CPUs, devices and other tools change
// the machine.
//
// Every round enters by one path: a trigger the watcher releases (its
// kernel events, its timers, the hints of reloads and of the loop
// itself). The data flows one way, in Round, with one value fed back:
//
//	sysfs/procfs -> machine.Machine -> policy.Compute(memory) -> apply -> state.Store -> metrics, HTTP
//	                                          ^-------- memory' ---------'
//
// The memory (policy.Memory) is what the kernel taught earlier rounds
// that no read shows: IRQs it refused to move, CPUs without a free
// vector, the placement load balancing chose, and the writes still to
// verify against the IRQs' effective CPUs (verify.go).
package daemon

import (
	"context"
	"fmt"
	"maps"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
	"github.com/numairqd/numairqd/pkg/watch"
)

// Notifier receives sd_notify(3) states ("READY=1", "STATUS=..."). The
// command passes one backed by go-systemd; outside systemd it is a
// no-op. Tests record the states.
type Notifier interface {
	Notify(state string)
}

// Options configure a Daemon.
type Options struct {
	// Sysfs and Procfs are the roots to read ("/sys", "/proc"); Etc is
	// where irqbalance_env_file: auto looks ("/etc"; "" looks nowhere).
	Sysfs, Procfs, Etc string
	// ConfigPath is the YAML config; "" means the built-in defaults.
	// With ConfigOptional, a missing file also means the defaults (the
	// default path need not exist); a file that exists must parse.
	ConfigPath     string
	ConfigOptional bool
	// Listen overrides the config's listen address when not empty.
	Listen string
	// DryRun plans and counts, and writes nothing.
	DryRun bool
	// Writer writes affinities and XPS maps; nil means apply.ProcWriter
	// on Procfs and Sysfs.
	Writer apply.Writer
	// Events enables the kernel uevent, rtnetlink and ethtool monitor
	// sources; without them the daemon still rescans on resync, SIGHUP
	// and config edits.
	Events bool
	// Queues reads NIC queues' packet counters for balance: load; nil
	// weighs queues by the interrupt estimate alone (the command passes
	// netdev's reader on the host's roots).
	Queues load.QueueReader
	// Netdev answers netdev netlink for each IRQ's queue and NAPI
	// thread; nil: the names and /proc alone (the command passes
	// netdev.Kernel on the host's roots).
	Netdev inventory.Netdev
	// Host says that the roots are the running kernel's (the command
	// decides): only then are NAPI threads pinned.
	Host   bool
	Log    *zap.Logger
	Notify Notifier
	// FitProcs, if set, is told after a round that changed how many
	// device IRQs a round reads, so that the command can size GOMAXPROCS
	// to the host.
	FitProcs func(deviceIRQs int)
	// Build labels numairqd_build_info: the command passes what its
	// --version prints.
	Build metrics.Build
	// Reloaded, if set, is told after every reload (SIGHUP or a config
	// edit) when it began, in CLOCK_MONOTONIC microseconds, and why the
	// config was rejected (nil: it is in force and a round applied it),
	// so that `numairqd reload` can wait for the reload it asked for.
	Reloaded func(startedUsec uint64, err error)
}

// Daemon holds what lives across rounds. Round, Reload, Oneshot and Run
// are for one goroutine; Config, State and Metrics are safe from any.
type Daemon struct {
	opts    Options
	log     *zap.Logger
	roots   machine.Roots
	cfg     atomic.Pointer[config.Config]
	store   state.Store
	reader  *machine.Reader
	applier *apply.Applier
	metrics *metrics.Metrics
	// mem is what the kernel taught the rounds so far: the next plan's
	// input and its apply's output.
	mem policy.Memory
	// progress is when the daemon last made progress (UnixNano), for the
	// watchdog.
	progress atomic.Int64
	// bal is load balancing's state, for the loop goroutine.
	bal balancer
	// rep logs what changed from round to round.
	rep reporter
	// stale counts the rounds in a row that asked to plan again.
	stale int
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
		opts.Writer = apply.ProcWriter{Proc: opts.Procfs, Sys: opts.Sysfs, Host: opts.Host}
	}
	d := &Daemon{opts: opts, log: opts.Log, roots: machine.Roots{Sys: opts.Sysfs, Proc: opts.Procfs, Etc: opts.Etc, Netdev: opts.Netdev}}
	d.reader = machine.NewReader(d.roots)
	cfg, err := d.loadConfig()
	if err != nil {
		return nil, err
	}
	d.cfg.Store(cfg)
	d.applier = apply.New(opts.Writer, opts.Log, apply.Options{DryRun: opts.DryRun, Progress: d.alive,
		Interrupts: inventory.FS{Proc: opts.Procfs, Sys: opts.Sysfs}.InterruptCount})
	d.metrics = metrics.New(&d.store, metrics.Options{PerIRQ: cfg.MetricsPerIRQ, Log: opts.Log,
		StaleAfter: 2 * cfg.ResyncInterval, Build: opts.Build})
	d.metrics.ConfigReload(true, time.Now())
	d.rep = reporter{log: opts.Log, metrics: d.metrics, fitProcs: opts.FitProcs}
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

// Listen is the metrics/HTTP address Run binds: Options.Listen, else the
// config's listen; "" for none.
func (d *Daemon) Listen() string {
	if d.opts.Listen != "" {
		return d.opts.Listen
	}
	return d.Config().Listen
}

// State is what the last successful round published, nil before the
// first.
func (d *Daemon) State() *state.State { return d.store.Load() }

// Metrics is the daemon's metrics registry and HTTP handler source.
func (d *Daemon) Metrics() *metrics.Metrics { return d.metrics }

// round runs the pipeline once: read, plan with the memory and bal,
// apply, publish. trigger labels the round; least is how deep the read
// must look at least (machine.Reader.Read); first, when not zero, is
// when the event that caused it arrived. The memory Apply returns is the
// next round's. A round that cannot read the machine publishes nothing.
func (d *Daemon) round(ctx context.Context, trigger string, least inventory.Depth, first time.Time, bal policy.Balancing) (*state.State, error) {
	d.alive()
	cfg := d.Config()
	m, err := d.reader.Read(cfg, least, d.mem.Verify.Masks())
	if err != nil {
		d.metrics.RoundFailed(trigger, m.Took, err)
		d.log.Error("round failed", zap.String("trigger", trigger), zap.Error(err))
		return nil, err
	}
	start := time.Now()
	p := policy.Compute(m.Snapshot, m.Inventory, cfg, m.ToolBans(), d.mem, bal)
	planning := time.Since(start)
	res, mem := d.applier.Apply(ctx, p, d.mem)
	d.mem = mem
	st := d.store.Publish(&state.State{Machine: m, Plan: p, Apply: res, Planning: planning,
		Applying: time.Since(start) - planning, Trigger: trigger, Config: cfg, DryRun: d.opts.DryRun, Finished: time.Now()})
	d.metrics.RoundDone(st, first)
	d.rep.report(st)
	return st, nil
}

// Reload re-reads the config file. A config that fails to load is
// rejected with the file, line and reason, and the old one stays in
// force.
func (d *Daemon) Reload() error {
	cfg, err := d.loadConfig()
	if err != nil {
		d.metrics.ConfigReload(false, time.Now())
		d.log.Error("config rejected, keeping the previous one", zap.Error(err))
		return err
	}
	old := d.cfg.Swap(cfg)
	if old.LoadBalance.HalfLife != cfg.LoadBalance.HalfLife {
		d.bal.sampler, d.bal.loads = nil, nil // averages of the old half-life
	}
	d.metrics.ConfigReload(true, time.Now())
	d.metrics.SetPerIRQ(cfg.MetricsPerIRQ)
	if old.Listen != cfg.Listen && d.opts.Listen == "" || old.ResyncInterval != cfg.ResyncInterval || old.LoadBalance.Interval != cfg.LoadBalance.Interval ||
		old.CoalesceWindow != cfg.CoalesceWindow || old.CoalesceMaxDelay != cfg.CoalesceMaxDelay {
		d.log.Warn("listen, resync_interval, coalesce_* and load_balance.interval take effect at the next restart")
	}
	d.log.Info("config loaded", zap.String("summary", cfg.Summary()))
	return nil
}

// maxReplans bounds the rounds in a row that plan again at once, so
// that a CPU that flaps cannot spin the loop.
const maxReplans = 3

// replan reports whether the round st, which found the memory before,
// must be planned again at once (CauseStale): its writes taught the
// memory something (the kernel refused an IRQ nobody knew was managed,
// or had no free vector on a CPU: the next plan places around them) or
// showed the plan was made from stale CPUs (EINVAL). Only CPUs and
// affinities can differ from the round's read, which the next read's
// keyed cache finds.
func (d *Daemon) replan(st *state.State, before policy.Memory) bool {
	if st == nil || !st.Apply.Stale && !d.mem.Learned(before) || d.stale == maxReplans {
		d.stale = 0
		return false
	}
	d.stale++
	return true
}

// Oneshot runs one round, and the stale rounds it asks for, and reports
// an error when an IRQ that is not managed by the kernel could not be
// placed: its write failed, no allowed CPU was left for it, or its
// files were unreadable.
func (d *Daemon) Oneshot(ctx context.Context) error {
	st, err := d.settle(ctx, watch.LabelStartup, inventory.DepthAll)
	if err != nil {
		return err
	}
	if n := len(st.Apply.Failed); n > 0 {
		return fmt.Errorf("%d IRQs could not be placed (%s)", n, failedSummary(st.Apply.Failed))
	}
	if un := st.Plan.Unplaced(); len(un) > 0 {
		return fmt.Errorf("%d IRQs could not be placed (IRQ %d: %s)", len(un), un[0].Number, un[0].Reason)
	}
	return nil
}

// settle runs a round and the stale rounds it asks for, with no
// watcher to take them: Oneshot's loop.
func (d *Daemon) settle(ctx context.Context, trigger string, least inventory.Depth) (*state.State, error) {
	var h staleHint
	st, err := d.step(ctx, &h, trigger, least, time.Time{}, d.balancing())
	for err == nil && h && ctx.Err() == nil {
		h = false
		st, err = d.step(ctx, &h, watch.LabelStale, inventory.DepthAffinities, time.Time{}, d.balancing())
	}
	return st, err
}

// staleHint is settle's hinter: whether a round asked for a stale round.
// The verify round needs a loop that runs on; settle has none.
type staleHint bool

func (s *staleHint) Hint(c watch.Cause)                 { *s = *s || c == watch.CauseStale }
func (*staleHint) HintAfter(watch.Cause, time.Duration) {}

// failedSummary counts failures by kind, e.g. "map[busy:1 no_space:2]".
func failedSummary(failed map[int]apply.Kind) string {
	kinds := map[apply.Kind]int{}
	for k := range maps.Values(failed) {
		kinds[k]++
	}
	return fmt.Sprint(kinds)
}
