package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// alive records progress: the loop waiting, a round starting, a write.
func (d *Daemon) alive() { d.progress.Store(time.Now().UnixNano()) }

// startWatchdog feeds systemd's watchdog every quarter interval while
// the daemon made progress within half of it, so a long round of
// writes keeps it fed and a stuck call does not. The returned channel
// (nil without a watchdog) ticks the waiting loop.
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
				if time.Since(time.Unix(0, d.progress.Load())) < interval/2 {
					d.opts.Notify.Notify(daemon.SdNotifyWatchdog)
				}
			}
		}
	})
	return idle.C
}
