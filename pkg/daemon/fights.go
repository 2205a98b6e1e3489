package daemon

import (
	"time"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/fight"
	"github.com/numairqd/numairqd/pkg/watch"
)

// resets reports whether t follows an event after which drivers reset
// their IRQs' affinities themselves (virtio-net at CPU hotplug, a
// device bound or its channels changed): no overwrite by another writer.
func resets(t watch.Trigger) bool {
	for _, c := range []watch.Cause{watch.CauseUevent, watch.CauseLink, watch.CauseChannels, watch.CauseNetdev, watch.CauseLost} {
		if t.Causes[c] > 0 {
			return true
		}
	}
	return false
}

// fights names the writers of the fights r started and logs r: a
// warning once per fight, its backoff rewrites and its end at info.
func (d *Daemon) fights(r fight.Round) {
	if len(r.Started) > 0 {
		w := fight.Find(d.roots.Proc, d.roots.Etc) // once a round that starts fights
		for _, f := range r.Started {
			d.fightTracker.Name(f.IRQ, w)
			d.log.Warn("another writer keeps moving this IRQ off numairqd's placement; numairqd backs off, rewriting it after growing intervals: "+
				"stop and disable the other writer, or leave the IRQ to it with a rule matching it (match: {irq_numbers: N}, policy: ignore)",
				zap.Int("irq", f.IRQ), zap.String("name", f.Name), zap.String("device", f.Device), zap.Stringer("want", f.Want),
				zap.Stringer("found", f.Found), zap.Stringer("writer", w), zap.Int("overwrites", f.Overwrites),
				zap.Duration("next_rewrite_in", f.Interval))
		}
	}
	for _, f := range r.Rewrite {
		d.log.Info("rewriting an IRQ another writer keeps moving, after its backoff", zap.Int("irq", f.IRQ), zap.String("name", f.Name),
			zap.Stringer("want", f.Want), zap.Stringer("found", f.Found), zap.Duration("interval", f.Interval), zap.Int("rewrites", f.Rewrites+1))
	}
	for _, f := range r.Ended {
		d.log.Info("fight over: the IRQ stays where numairqd put it, or numairqd no longer places it", zap.Int("irq", f.IRQ),
			zap.String("name", f.Name), zap.Stringer("writer", f.Writer), zap.Int("overwrites", f.Overwrites), zap.Int("rewrites", f.Rewrites),
			zap.Duration("lasted", time.Since(f.Since).Round(time.Second)))
	}
}

// hintFights asks h for the round the next fight needs, unless a verify
// round comes before it; at least VerifyDelay ahead, so that a rewrite
// that fails cannot spin the loop.
func (d *Daemon) hintFights(h hinter, now time.Time) {
	due := d.fightTracker.Due()
	if due.IsZero() || now.Before(d.verifyAt) && !due.Before(d.verifyAt) {
		return
	}
	wait := max(due.Sub(now), VerifyDelay)
	h.HintAfter(watch.CauseVerify, wait)
	d.verifyAt = now.Add(wait)
}
