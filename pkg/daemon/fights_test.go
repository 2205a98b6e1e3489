package daemon

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/fight"
	"github.com/numairqd/numairqd/pkg/watch"
)

// overwriteRounds moves IRQ 25 to CPU 3 (outside every plan of the
// fixture), as another writer, before each of n rounds of cause c.
func overwriteRounds(t *testing.T, d *Daemon, tree *fakesys.Tree, h *hints, c watch.Cause, n int) {
	t.Helper()
	for range n {
		tree.WriteFile("proc/irq/25/smp_affinity_list", "3\n")
		d.take(context.Background(), h, trigger(t, c))
	}
}

// TestFightBacksOff: three overwrites of IRQ 25 between resync rounds
// start a fight: one warning, the IRQ's writes held (counted), the
// fight in the State and the gauge, and a round asked for its backoff.
func TestFightBacksOff(t *testing.T) {
	tree := fixture(t)
	w := &fileWriter{proc: tree.Proc()}
	core, logs := observer.New(zapcore.WarnLevel)
	d := newDaemon(t, tree, w, "", func(o *Options) { o.Log = zap.New(core) })
	h := &hints{}
	d.take(context.Background(), h, trigger(t, watch.CauseResync))
	overwriteRounds(t, d, tree, h, watch.CauseResync, fight.Overwrites)

	st := d.State()
	if len(st.Fights) != 1 || st.Fights[0].IRQ != 25 || st.Fights[0].Found.String() != "3" || st.Apply.BackedOff != 1 {
		t.Fatalf("after %d overwrites: fights %+v, %d writes backed off; want IRQ 25's fight, its write held", fight.Overwrites, st.Fights, st.Apply.BackedOff)
	}
	// The verify round the last write asked for, once due, asks for
	// the backoff's end.
	d.verifyAt = time.Time{}
	d.take(context.Background(), h, trigger(t, watch.CauseVerify))
	if got := h.after[watch.CauseVerify]; got < fight.Base-VerifyDelay || got > fight.Base {
		t.Errorf("round asked for after %s, want the backoff's end (%s)", got, fight.Base)
	}
	writes := w.n
	overwriteRounds(t, d, tree, h, watch.CauseResync, 2)
	if w.n != writes || d.State().Apply.BackedOff != 1 {
		t.Errorf("%d writes during the backoff, want none", w.n-writes)
	}
	if n := logs.FilterMessageSnippet("another writer keeps moving").Len(); n != 1 {
		t.Errorf("%d fight warnings, want 1: %v", n, logs.All())
	}
	if g := gauge(t, d, "numairqd_irqs_in_fight", "writer", fight.Unknown); g != 1 {
		t.Errorf("numairqd_irqs_in_fight{writer=unknown} = %v, want 1", g)
	}
	if c := scrape(t, d)["numairqd_fight_writes_skipped_total"].GetMetric()[0].GetCounter().GetValue(); c != 4 {
		t.Errorf("numairqd_fight_writes_skipped_total = %v, want 4", c)
	}
}

// TestNoFightAfterDriverResets: the same overwrites seen by rounds a CPU
// hotplug uevent caused (virtio-net resets its affinities then), or made
// in a dry run, start no fight.
func TestNoFightAfterDriverResets(t *testing.T) {
	for name, dry := range map[string]bool{"uevent": false, "dry run": true} {
		t.Run(name, func(t *testing.T) {
			tree := fixture(t)
			w := &fileWriter{proc: tree.Proc()}
			d := newDaemon(t, tree, w, "", func(o *Options) { o.DryRun = dry })
			h := &hints{}
			d.take(context.Background(), h, trigger(t, watch.CauseResync))
			c := watch.CauseUevent
			if dry {
				c = watch.CauseResync
			}
			writes := w.n
			overwriteRounds(t, d, tree, h, c, 2*fight.Overwrites)
			if want := 2 * fight.Overwrites; !dry && w.n-writes != want {
				t.Errorf("%d rewrites after the resets, want %d: each round puts the IRQ back", w.n-writes, want)
			}
			if st := d.State(); len(st.Fights) != 0 || st.Apply.BackedOff != 0 {
				t.Errorf("fights %+v, %d writes backed off; want none", st.Fights, st.Apply.BackedOff)
			}
		})
	}
}
