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
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
	"github.com/numairqd/numairqd/pkg/watch"
)

// Run keeps the placement true until ctx is cancelled: a first round,
// then a round for every trigger the watcher releases. Kernel events,
// the resync and load timers, reload requests (sighup: where the
// command's signal.Notify delivers SIGHUP; nil: none), config file
// changes and the loop's own stale and verify rounds all reach it as
// the watcher's triggers. A failed round is logged and counted, never
// fatal. Run returns after every goroutine it started has stopped;
// with restore_on_exit it first writes back the affinities it found.
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

	// The first round runs before the watcher so nothing it does is
	// mistaken for an event; events arriving meanwhile queue in the
	// sockets and cause one more round.
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

// hinter is where the loop asks for its own rounds: the watcher.
type hinter interface {
	Hint(watch.Cause)
	HintAfter(watch.Cause, time.Duration)
}

// take runs the round trigger t asks for: a reload and its round, a
// load round, or a round reading as deep as t needs.
func (d *Daemon) take(ctx context.Context, h hinter, t watch.Trigger) {
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

// VerifyDelay is how long after a round that wrote the daemon checks
// the effective CPUs (policy/effective.go): long enough for a queue
// with traffic to fire and take a deferred move, short next to the
// resync.
const VerifyDelay = 2 * time.Second

// step runs one round planning with bal, asks h for the rounds it
// calls for (CauseStale at once, CauseVerify VerifyDelay after a write).
// round logs and counts its errors. A fresh read
// first forgets the full CPUs and the re-writes of IRQs the kernel kept
// outside their plan: vectors may have been freed since.
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
	if st != nil && st.Apply.Written > 0 {
		h.HintAfter(watch.CauseVerify, VerifyDelay)
	}
	return st, err
}

// newWatcher opens the event sources and registers their counters. A
// source that cannot be opened is logged and counted; resync goes on.
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

// startHints turns SIGHUP and config file changes into the watcher's
// hints, so they are coalesced and ordered with kernel events. Both
// start before the first round: a change made after READY=1 is never
// missed.
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
		// SIGHUP stays the reload path when the directory cannot be
		// watched.
		if fw := d.watchFiles("config file", []string{d.opts.ConfigPath}); fw != nil {
			wg.Go(d.fileChanges(ctx, fw, func() { w.Hint(watch.CauseConfig) }))
		}
	}
	// cri-o and tuned rewrite irqbalance's environment file and restart
	// irqbalance; the watch is how numairqd hears it (the resync is the
	// fallback).
	if paths := d.envFiles(); len(paths) > 0 {
		if fw := d.watchFiles("irqbalance environment file", paths); fw != nil {
			wg.Go(d.fileChanges(ctx, fw, func() { w.Hint(watch.CauseBans) }))
		}
	}
}

// listen binds the metrics/HTTP address (Listen: flag, else config),
// nil when there is none. It runs before anything else: a daemon that
// cannot have its address (another numairqd holds it) must not start.
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

// readDepth is how deep a round for t must read at least: afresh when
// events were lost, on the resync and on reloads (Trigger.Fresh);
// /proc/interrupts after a link or channel change, since a driver may
// then have requested or freed IRQs on descriptors it keeps (ip link
// down/up, ethtool -L), which nothing the inventory's key lists shows,
// and after a netdev notification (a device registered or changed),
// whose queue-to-IRQ links are read with the devices; otherwise what
// the kernel's listings show.
func readDepth(t watch.Trigger) inventory.Depth {
	switch {
	case t.Fresh():
		return inventory.DepthAll
	case t.Causes[watch.CauseLink] > 0 || t.Causes[watch.CauseChannels] > 0 || t.Causes[watch.CauseNetdev] > 0:
		return inventory.DepthInterrupts
	}
	return inventory.DepthAffinities
}

// reload follows systemd's reload protocol: RELOADING=1 with
// MONOTONIC_USEC, reload, a round under the new config, READY=1; then
// it tells Options.Reloaded.
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

// MonotonicUsec is CLOCK_MONOTONIC in microseconds, the clock of
// systemd's MONOTONIC_USEC and of Options.Reloaded: one clock for every
// process on the host.
func MonotonicUsec() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0 // not on Linux; nothing here runs there
	}
	return uint64(ts.Sec)*1e6 + uint64(ts.Nsec)/1e3
}

// stop says STOPPING=1 and, with restore_on_exit, writes back the masks
// found at start. The inventory is read afresh so that IRQs freed or
// requested under another name since the last round are left alone.
func (d *Daemon) stop() {
	d.opts.Notify.Notify(daemon.SdNotifyStopping)
	if !d.Config().RestoreOnExit || d.opts.DryRun {
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
