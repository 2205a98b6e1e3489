package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// alive records that the daemon made progress: the loop waiting for
// input, a round starting, an affinity write done.
func (d *Daemon) alive() { d.progress.Store(time.Now().UnixNano()) }

// progressed reports whether the daemon made progress within the last d.
func (d *Daemon) progressed(within time.Duration) bool {
	return time.Since(time.Unix(0, d.progress.Load())) < within
}

// startWatchdog feeds systemd's watchdog (WatchdogSec=) from its own
// goroutine, every quarter interval, while the daemon made progress
// within the last half interval: the loop beats while it waits (the
// returned channel ticks it), a round when it starts and after every
// write. A round of a few hundred IRQs in EBUSY retries outlasts
// WatchdogSec=30s, so a long round keeps the watchdog fed while a
// daemon stuck in one call does not. Without a watchdog it returns nil.
func (d *Daemon) startWatchdog(ctx context.Context, wg *sync.WaitGroup) <-chan time.Time {
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil || interval <= 0 {
		return nil
	}
	d.alive()
	idle, feed := time.NewTicker(interval/4), time.NewTicker(interval/4)
	wg.Go(func() {
		defer idle.Stop()
		defer feed.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-feed.C:
				if d.progressed(interval / 2) {
					d.opts.Notify.Notify(daemon.SdNotifyWatchdog)
				}
			}
		}
	})
	return idle.C
}
