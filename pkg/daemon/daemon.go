// Package daemon is numairqd's main loop: on every trigger the watcher
// releases it reads the machine, plans, applies and publishes a State.
// The data flows one way, with one value fed back:
//
//	sysfs/procfs -> machine.Machine -> policy.Compute(memory) -> apply -> state.Store -> metrics, HTTP
//	                                          ^-------- memory' ---------'
//
// The memory (policy.Memory) is what the kernel taught earlier rounds
// that no read shows: refused IRQs, full CPUs, the balanced placement
// and the writes still to verify.
package daemon

import (
	"context"
	"fmt"
	"maps"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/api"
	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/fight"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
	"github.com/numairqd/numairqd/pkg/topology"
	"github.com/numairqd/numairqd/pkg/watch"
)

// Notifier receives sd_notify(3) states ("READY=1", "STATUS=...").
type Notifier interface {
	Notify(state string)
}

// Options configure a Daemon.
type Options struct {
	Sysfs, Procfs, Etc string           // roots; Etc for irqbalance_env_file: auto
	ConfigPath         string           // the YAML config; "": the defaults
	ConfigOptional     bool             // a missing ConfigPath means the defaults
	Listen             string           // overrides the config's listen if set
	DryRun             bool             // mode observe, whatever the config says
	Writer             apply.Writer     // nil: apply.ProcWriter on the roots
	Events             bool             // the kernel event sources; else resync and hints only
	Queues             load.QueueReader // queue packet counters; nil: IRQ counts only
	Netdev             inventory.Netdev // netdev netlink; nil: names and /proc only
	Host               bool             // roots are the running kernel's: pin NAPI threads
	Log                *zap.Logger
	Notify             Notifier
	FitProcs           func(deviceIRQs int) // told of a new count, to size GOMAXPROCS
	Build              metrics.Build        // labels numairqd_build_info
	// Reloaded, if set, is told after every reload when it began
	// (CLOCK_MONOTONIC µs) and why the config was rejected (nil: applied),
	// so that `numairqd reload` can wait for it.
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
	mem     policy.Memory // the next plan's input, the last apply's output
	// progress is when the daemon last made progress (UnixNano).
	progress atomic.Int64
	bal      balancer
	rep      reporter
	stale    int // rounds in a row that asked to plan again
	// fightTracker follows other writers' changes of what numairqd
	// wrote; reset says the round taken follows a driver's own reset.
	fightTracker fight.Tracker
	reset        bool
	verifyAt     time.Time // when the verify hint last asked for fires
}

type nopNotifier struct{}

func (nopNotifier) Notify(string) {}

// New loads the config and prepares the daemon; it reads no sysfs yet.
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
		StaleAfter: 2 * cfg.ResyncInterval, Build: opts.Build, BootID: api.ReadBootID(opts.Procfs)})
	d.metrics.ConfigReload(true, time.Now())
	d.rep = reporter{log: opts.Log, metrics: d.metrics, fitProcs: opts.FitProcs, possible: func() cpumask.Mask {
		s, err := topology.NewFS(opts.Sysfs).ReadDetail() // once a config: not in the rounds' reads
		if err != nil {
			return cpumask.Mask{}
		}
		return s.Possible()
	}}
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

// Mode is the mode in force: the config's, observe with Options.DryRun.
func (d *Daemon) Mode() config.Mode { return d.mode(d.Config()) }

func (d *Daemon) mode(cfg *config.Config) config.Mode {
	if d.opts.DryRun {
		return config.ModeObserve
	}
	return cfg.Mode
}

// Listen is the HTTP address Run binds: Options.Listen, else the
// config's; "" for none.
func (d *Daemon) Listen() string {
	if d.opts.Listen != "" {
		return d.opts.Listen
	}
	return d.Config().Listen
}

// State is what the last successful round published, or nil.
func (d *Daemon) State() *state.State { return d.store.Load() }

// Metrics is the daemon's metrics registry and HTTP handler source.
func (d *Daemon) Metrics() *metrics.Metrics { return d.metrics }

// round reads at least as deep as least, plans, applies and publishes.
// first, when not zero, is when the causing event arrived. A round that
// cannot read the machine publishes nothing.
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
	observe := d.mode(cfg) == config.ModeObserve
	if observe {
		d.fightTracker = fight.Tracker{} // nothing written, nothing to defend
	}
	fr := d.fightTracker.Observe(p, time.Now(), d.reset)
	d.mem.Backoff = fr.Hold
	d.applier.SetDryRun(observe)
	res, mem := d.applier.Apply(ctx, p, d.mem)
	d.mem = mem
	d.fightTracker.Wrote(res, time.Now())
	d.fights(fr)
	st := d.store.Publish(&state.State{Machine: m, Plan: p, Apply: res, Planning: planning,
		Applying: time.Since(start) - planning, Trigger: trigger, Config: cfg, DryRun: observe, Finished: time.Now(),
		Fights: d.fightTracker.Fights()})
	d.metrics.RoundDone(st, first)
	d.rep.report(st)
	return st, nil
}

// Reload re-reads the config file; a config that fails to load is
// rejected and the old one stays in force.
func (d *Daemon) Reload() error {
	cfg, err := d.loadConfig()
	if err != nil {
		d.metrics.ConfigRejected(err, time.Now())
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
	if old.Mode != cfg.Mode {
		d.logMode(cfg.Mode)
	}
	return nil
}

// logMode says what a reload's change of mode to m does.
func (d *Daemon) logMode(m config.Mode) {
	switch {
	case d.opts.DryRun:
		d.log.Warn("mode changed, but --dry-run keeps observing: nothing is written", zap.String("mode", string(m)))
	case m == config.ModeEnforce:
		d.log.Info("mode enforce: this reload's round writes the plan", zap.String("mode", string(m)))
	default:
		d.log.Info("mode observe: writing stops; what was written stays, and restore_on_exit writes nothing while observing",
			zap.String("mode", string(m)))
	}
}

// maxReplans bounds the re-plans in a row, so a flapping CPU cannot
// spin the loop.
const maxReplans = 3

// replan reports whether round st must be planned again at once: its
// writes taught the memory something (since before) or found the CPUs
// stale (EINVAL).
func (d *Daemon) replan(st *state.State, before policy.Memory) bool {
	if st == nil || !st.Apply.Stale && !d.mem.Learned(before) || d.stale == maxReplans {
		d.stale = 0
		return false
	}
	d.stale++
	return true
}

// Oneshot runs one round and the stale rounds it asks for; it fails when
// an unmanaged IRQ could not be placed.
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

// settle runs a round and the stale rounds it asks for, without a
// watcher.
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
