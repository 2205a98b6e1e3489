package daemon

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/watch"
)

// Run keeps the placement true until ctx is cancelled: a first round,
// then a round on every coalesced event, resync, reload request (sighup:
// the command maps SIGHUP to it) or config file change. A failed round
// is logged and counted, never fatal. It returns after every goroutine
// it started has stopped; with restore_on_exit it first writes back the
// affinities it found.
func (d *Daemon) Run(ctx context.Context, sighup <-chan struct{}) error {
	cfg := d.Config()
	w, err := watch.New(watch.Options{
		Window: cfg.CoalesceWindow, MaxDelay: cfg.CoalesceMaxDelay, Resync: cfg.ResyncInterval,
		Uevents: d.opts.Events, Links: d.opts.Events,
		Logf: func(f string, a ...any) { d.log.Warn(fmt.Sprintf(f, a...)) },
	})
	if err != nil {
		return err
	}
	if err := w.Degraded(); err != nil {
		d.metrics.Error("watch")
		d.log.Warn("event sources unavailable, relying on resync", zap.Error(err))
	}

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	configChanged := make(chan struct{}, 1)
	if d.opts.ConfigPath != "" {
		if fw := d.watchConfigDir(); fw != nil {
			wg.Go(func() { d.configChanges(ctx, fw, configChanged) })
		}
	}

	// The first round runs before the watcher so nothing it does is
	// mistaken for an event; events arriving meanwhile queue in the
	// sockets and cause one more round.
	d.roundAndReport(ctx, "startup", time.Time{})
	d.opts.Notify.Notify(daemon.SdNotifyReady + "\n" + d.statusLine())

	wg.Go(func() {
		if err := w.Run(ctx); err != nil {
			d.log.Error("watcher stopped", zap.Error(err))
		}
	})
	listen := cfg.Listen
	if d.opts.Listen != "" {
		listen = d.opts.Listen
	}
	if listen != "" {
		h := d.metrics.Handler(d.PlanJSON)
		wg.Go(func() {
			if err := metrics.Serve(ctx, listen, h, d.log); err != nil {
				d.metrics.Error("http")
				d.log.Error("metrics server stopped", zap.Error(err))
			}
		})
	}

	var watchdog <-chan time.Time
	if interval, err := daemon.SdWatchdogEnabled(false); err == nil && interval > 0 {
		t := time.NewTicker(interval / 2)
		defer t.Stop()
		watchdog = t.C
	}
	var lastStats watch.Stats
	for {
		select {
		case <-ctx.Done():
			d.stop()
			return nil
		case t, ok := <-w.Triggers():
			if !ok {
				d.stop()
				return nil
			}
			lastStats = d.countEvents(t, w.Stats(), lastStats)
			d.roundAndReport(ctx, triggerLabel(t.Reasons), t.First)
		case <-sighup:
			d.reloadAndReport(ctx, "sighup")
		case <-configChanged:
			d.reloadAndReport(ctx, "config")
		case <-watchdog:
			d.opts.Notify.Notify(daemon.SdNotifyWatchdog)
		}
	}
}

// roundAndReport runs the rounds for one trigger and updates STATUS=.
func (d *Daemon) roundAndReport(ctx context.Context, trigger string, first time.Time) {
	d.settle(ctx, trigger, first) //nolint:errcheck // Round logs and counts its errors
	d.opts.Notify.Notify(d.statusLine())
}

// reloadAndReport follows systemd's Type=notify-reload protocol:
// RELOADING=1 with MONOTONIC_USEC, reload, a round under the new config,
// READY=1.
func (d *Daemon) reloadAndReport(ctx context.Context, trigger string) {
	d.opts.Notify.Notify(daemon.SdNotifyReloading + "\n" + daemon.SdNotifyMonotonicUsec())
	if err := d.Reload(); err != nil {
		d.opts.Notify.Notify(daemon.SdNotifyReady + "\nSTATUS=config rejected, previous config in force: " + firstLine(err.Error()))
		return
	}
	d.roundAndReport(ctx, trigger, time.Time{})
	d.opts.Notify.Notify(daemon.SdNotifyReady)
}

func (d *Daemon) stop() {
	d.opts.Notify.Notify(daemon.SdNotifyStopping)
	if !d.Config().RestoreOnExit || d.opts.DryRun {
		return
	}
	// A fresh inventory lets the applier forget IRQs that vanished or
	// were re-requested under another name before it restores.
	if _, inv, err := d.read(); err == nil {
		d.applier.Annotate(inv)
	}
	res := d.applier.Restore(context.Background())
	d.log.Info("restored original affinities", zap.Int("written", res.Written), zap.Any("by_kind", res.ByKind))
}

func (d *Daemon) statusLine() string {
	st := d.Status()
	if st == nil || st.Plan == nil {
		return "STATUS=no successful round yet"
	}
	return fmt.Sprintf("STATUS=%s; %d failed; last round %s", st.Plan.Summary(), len(st.Failed), st.Round.Format(time.TimeOnly))
}

// countEvents turns the watcher's cumulative counters into metric
// increments since the previous trigger.
func (d *Daemon) countEvents(t watch.Trigger, now, before watch.Stats) watch.Stats {
	for reason, n := range t.Reasons {
		if sub, action, ok := strings.Cut(reason, "/"); ok {
			for range n {
				d.metrics.Uevent(sub, action)
			}
		}
	}
	for range now.Dropped - before.Dropped {
		d.metrics.UeventDropped("not_kernel")
	}
	for range now.Malformed - before.Malformed {
		d.metrics.UeventDropped("malformed")
	}
	for range now.Overflows - before.Overflows {
		d.metrics.NetlinkOverflow("netlink")
	}
	return now
}

// triggerLabel reduces a trigger's reasons to one label of a small,
// fixed set for numairqd_rounds_total{trigger}.
func triggerLabel(reasons map[string]int) string {
	has := func(match func(string) bool) bool {
		for r := range reasons {
			if match(r) {
				return true
			}
		}
		return false
	}
	switch {
	case has(func(r string) bool {
		return r == watch.ReasonOverflow || r == watch.ReasonTruncated || r == watch.ReasonDegraded
	}):
		return watch.ReasonOverflow
	case has(func(r string) bool { return strings.Contains(r, "/") }):
		return "uevent"
	case has(func(r string) bool { return r == watch.ReasonLink }):
		return watch.ReasonLink
	default:
		return watch.ReasonResync
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
