package daemon

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/numairqd/numairqd/pkg/api"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
	"github.com/numairqd/numairqd/pkg/watch"
)

// Run keeps the placement true until ctx is cancelled: a first round,
// then one for every trigger the watcher releases (events, timers,
// SIGHUP on sighup, config edits, the loop's own hints). A failed round
// is logged, never fatal. Run returns after its goroutines stop.
func (d *Daemon) Run(ctx context.Context, sighup <-chan os.Signal) error {
	ln, err := d.listen(ctx)
	if err != nil {
		return err
	}
	w, err := d.newWatcher()
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	d.startHints(ctx, &wg, w, sighup)
	idle := d.startWatchdog(ctx, &wg)

	// Before the watcher runs, so that its writes are not taken for
	// events; events meanwhile queue in the sockets.
	d.step(ctx, w, watch.LabelStartup, inventory.DepthAll, time.Time{}, d.balancing())
	d.opts.Notify.Notify(daemon.SdNotifyReady + "\n" + d.statusLine())
	wg.Go(func() {
		if err := w.Run(ctx); err != nil {
			d.log.Error("watcher stopped", zap.Error(err))
		}
	})
	d.serveHTTP(ctx, &wg, ln)
	d.sample(time.Now()) // the sampler's first, priming sample
	for {
		select {
		case <-ctx.Done():
			d.stop()
			return nil
		case _, ok := <-w.Ready():
			if !ok {
				d.stop()
				return nil
			}
			if t, ok := w.Take(); ok {
				d.take(ctx, w, t)
				d.opts.Notify.Notify(d.statusLine())
			}
		case <-idle:
			d.alive()
		}
	}
}

// hinter is where the loop asks for its own rounds.
type hinter interface {
	Hint(watch.Cause)
	HintAfter(watch.Cause, time.Duration)
}

// take runs the round t asks for: a reload, a load round or a read.
func (d *Daemon) take(ctx context.Context, h hinter, t watch.Trigger) {
	d.reset = resets(t)
	defer func() { d.reset = false }()
	switch {
	case t.Reload():
		d.reload(ctx, h, t.Label())
	case t.Causes[watch.CauseLoad] > 0 && !d.bal.held:
		d.loadRound(ctx, h, t)
	default:
		d.bal.held = false
		d.step(ctx, h, t.Label(), readDepth(t), t.First, d.balancing())
	}
}

// VerifyDelay is how long after a write the effective CPUs are checked:
// time for a busy queue to fire and take a deferred move.
const VerifyDelay = 2 * time.Second

// step runs one round and asks h for the rounds it calls for (stale at
// once, verify after a write, a fight's next rewrite). A fresh read forgets the full CPUs and
// re-writes first: vectors may have been freed since.
func (d *Daemon) step(ctx context.Context, h hinter, trigger string, least inventory.Depth, first time.Time, bal policy.Balancing) (*state.State, error) {
	if least == inventory.DepthAll {
		d.mem.Full = cpumask.Mask{}
		d.mem.Verify = d.mem.Verify.Fresh()
	}
	before := d.mem
	st, err := d.round(ctx, trigger, least, first, bal)
	if d.replan(st, before) {
		h.Hint(watch.CauseStale)
	}
	now := time.Now()
	if st != nil && st.Apply.Written > 0 {
		h.HintAfter(watch.CauseVerify, VerifyDelay)
		d.verifyAt = now.Add(VerifyDelay)
	}
	d.hintFights(h, now)
	return st, err
}

// newWatcher opens the event sources; one that fails is logged and
// counted, and resync goes on.
func (d *Daemon) newWatcher() (*watch.Watcher, error) {
	cfg := d.Config()
	w, err := watch.New(watch.Options{
		Window: cfg.CoalesceWindow, MaxDelay: cfg.CoalesceMaxDelay, Resync: cfg.ResyncInterval, Load: cfg.LoadBalance.Interval,
		Uevents: d.opts.Events, Links: d.opts.Events, Ethtool: d.opts.Events, Netdev: d.opts.Events,
		Logf: func(f string, a ...any) { d.log.Warn(fmt.Sprintf(f, a...)) },
	})
	if err != nil {
		return nil, err
	}
	if err := w.Degraded(); err != nil {
		d.metrics.Error(metrics.ErrWatch)
		d.log.Warn("event sources unavailable, relying on resync", zap.Error(err))
	}
	if err := w.Absent(); err != nil {
		d.log.Info("no netdev notifications on this kernel (6.3+ has them); rtnetlink and uevents announce devices", zap.Error(err))
	}
	d.metrics.Watch(w.Stats)
	return w, nil
}

// startHints turns SIGHUP, file changes and the isolated partitions' poll
// into the watcher's hints, before the first round so that no change
// after READY=1 is missed.
func (d *Daemon) startHints(ctx context.Context, wg *sync.WaitGroup, w *watch.Watcher, sighup <-chan os.Signal) {
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-sighup:
				w.Hint(watch.CauseSIGHUP)
			}
		}
	})
	if d.opts.ConfigPath != "" {
		if fw := d.watchFiles("config file", []string{d.opts.ConfigPath}); fw != nil {
			wg.Go(d.fileChanges(ctx, fw, func() { d.configChanged(w) }))
		}
	}
	// cri-o and tuned rewrite irqbalance's environment file.
	if paths := d.envFiles(); len(paths) > 0 {
		if fw := d.watchFiles("irqbalance environment file", paths); fw != nil {
			wg.Go(d.fileChanges(ctx, fw, func() { w.Hint(watch.CauseBans) }))
		}
	}
	d.pollPartitions(ctx, wg, w)
}

// configChanged asks h for a reload after the config file changed,
// unless watch_config is false: then SIGHUP alone reloads.
func (d *Daemon) configChanged(h hinter) {
	if d.Config().WatchConfig {
		h.Hint(watch.CauseConfig)
		return
	}
	d.log.Info("the config file changed; watch_config is false, so it is read at the next reload (SIGHUP, systemctl reload, numairqd reload)",
		zap.String("path", d.opts.ConfigPath))
}

// listen binds Listen's address (nil if none) first: a daemon that
// cannot have it must not start.
func (d *Daemon) listen(ctx context.Context) (net.Listener, error) {
	addr := d.Listen()
	if addr == "" {
		return nil, nil
	}
	ln, err := api.Listen(ctx, addr)
	if err != nil {
		d.metrics.Error(metrics.ErrHTTP)
	}
	return ln, err
}

// serveHTTP serves the HTTP API (pkg/api) on ln, if any.
func (d *Daemon) serveHTTP(ctx context.Context, wg *sync.WaitGroup, ln net.Listener) {
	if ln == nil {
		return
	}
	h := api.New(d.metrics).Handler()
	wg.Go(func() {
		if err := api.Serve(ctx, ln, h, d.log); err != nil {
			d.metrics.Error(metrics.ErrHTTP)
			d.log.Error("metrics server stopped", zap.Error(err))
		}
	})
}

// readDepth is how deep a round for t must read: all when Fresh;
// /proc/interrupts after link, channel or netdev changes (drivers
// request IRQs on descriptors they keep); else the affinities.
func readDepth(t watch.Trigger) inventory.Depth {
	switch {
	case t.Fresh():
		return inventory.DepthAll
	case t.Causes[watch.CauseLink] > 0 || t.Causes[watch.CauseChannels] > 0 || t.Causes[watch.CauseNetdev] > 0:
		return inventory.DepthInterrupts
	}
	return inventory.DepthAffinities
}

// reload follows systemd's protocol (RELOADING=1, MONOTONIC_USEC, a
// round, READY=1), then tells Options.Reloaded.
func (d *Daemon) reload(ctx context.Context, h hinter, trigger string) {
	started := MonotonicUsec()
	d.opts.Notify.Notify(fmt.Sprintf("%s\nMONOTONIC_USEC=%d", daemon.SdNotifyReloading, started))
	err := d.Reload()
	if err != nil {
		d.opts.Notify.Notify(daemon.SdNotifyReady + "\nSTATUS=config rejected, previous config in force: " + firstLine(err.Error()))
	} else {
		d.step(ctx, h, trigger, inventory.DepthAll, time.Time{}, d.balancing())
		d.opts.Notify.Notify(daemon.SdNotifyReady)
	}
	if d.opts.Reloaded != nil {
		d.opts.Reloaded(started, err)
	}
}

// MonotonicUsec is CLOCK_MONOTONIC in microseconds (MONOTONIC_USEC).
func MonotonicUsec() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0 // not on Linux; nothing here runs there
	}
	return uint64(ts.Sec)*1e6 + uint64(ts.Nsec)/1e3
}

// stop says STOPPING=1 and, with restore_on_exit and unless observing,
// writes back the masks found at start to the IRQs a fresh read still
// finds.
func (d *Daemon) stop() {
	d.opts.Notify.Notify(daemon.SdNotifyStopping)
	if !d.Config().RestoreOnExit || d.Mode() == config.ModeObserve {
		return
	}
	inv, err := inventory.FS{Proc: d.roots.Proc, Sys: d.roots.Sys}.Read()
	if err != nil {
		d.log.Warn("cannot read the inventory before restoring; restoring every saved IRQ", zap.Error(err))
		inv = nil
	}
	res := d.applier.Restore(context.Background(), inv)
	d.log.Info("restored original affinities", zap.Int("written", res.Written), zap.Any("by_kind", res.ByKind))
}

func (d *Daemon) statusLine() string {
	st := d.State()
	if st == nil {
		return "STATUS=no successful round yet"
	}
	return fmt.Sprintf("STATUS=%s; %d failed%s; last round %s", st.Plan.Summary(), len(st.Apply.Failed), effectiveSummary(st.Plan),
		st.Finished.Format(time.TimeOnly))
}

// effectiveSummary is "N pending, M mismatched" for STATUS=, "" for none.
func effectiveSummary(p *policy.Plan) string {
	pending, mismatch := len(p.EffectiveIRQs(policy.EffectivePending)), len(p.EffectiveIRQs(policy.EffectiveMismatch))
	if pending+mismatch == 0 {
		return ""
	}
	return fmt.Sprintf("; effective CPUs outside the plan: %d pending, %d mismatched", pending, mismatch)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
