package daemon

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/api"
	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/fight"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/watch"
)

// checkMode checks the daemon's mode, the last State's, /status's and
// numairqd_mode's.
func checkMode(t *testing.T, d *Daemon, want config.Mode) {
	t.Helper()
	st := d.State()
	if d.Mode() != want || st.Mode() != want || st.DryRun != (want == config.ModeObserve) || api.NewStatus(st, "").Mode != string(want) {
		t.Errorf("mode %s, State %s (dry_run %t), /status %q; want %s", d.Mode(), st.Mode(), st.DryRun, api.NewStatus(st, "").Mode, want)
	}
	for _, m := range []config.Mode{config.ModeEnforce, config.ModeObserve} {
		if g, w := gauge(t, d, "numairqd_mode", "mode", string(m)), m == want; (g == 1) != w {
			t.Errorf("numairqd_mode{mode=%q} = %v with mode %s", m, g, want)
		}
	}
}

// TestObserveThenEnforce: mode observe writes nothing (no affinity, XPS
// map or NAPI thread) and serves what it would write; a reload to
// enforce writes at that reload's round; back to observe, writing stops,
// what was written stays, and restore_on_exit writes nothing at stop.
func TestObserveThenEnforce(t *testing.T) {
	tree := fixture(t)
	w := &fileWriter{proc: tree.Proc()}
	path := filepath.Join(t.TempDir(), "numairqd.yaml")
	writeFile(t, path, "mode: observe\nrestore_on_exit: true\n")
	core, logs := observer.New(zapcore.InfoLevel)
	d := newDaemon(t, tree, w, path, func(o *Options) { o.Log = zap.New(core) })
	ctx, h := context.Background(), &hints{}

	d.take(ctx, h, trigger(t, watch.CauseResync))
	st := d.State()
	if w.writes() != 0 || w.pins != 0 || st.Apply.Written != 0 || st.Apply.XPSWritten != 0 || st.Apply.DryRun != 13 ||
		st.Apply.XPSByKind[apply.KindDryRun] == 0 || affinity(t, tree, 25) != "0-7" {
		t.Fatalf("observe: writer saw %d writes, %d pins; result %+v", w.writes(), w.pins, st.Apply)
	}
	checkMode(t, d, config.ModeObserve)

	writeFile(t, path, "mode: enforce\nrestore_on_exit: true\n")
	d.take(ctx, h, trigger(t, watch.CauseSIGHUP))
	if st := d.State(); st.Trigger != watch.LabelSIGHUP || w.writes() != 13 || st.Apply.Written != 13 || affinity(t, tree, 25) != "4" {
		t.Fatalf("the reload to enforce: round %q wrote %d (writer saw %d), IRQ 25 on %s; want 13 written at the reload's round, IRQ 25 on 4",
			st.Trigger, st.Apply.Written, w.writes(), affinity(t, tree, 25))
	}
	checkMode(t, d, config.ModeEnforce)
	if logs.FilterMessageSnippet("mode enforce: this reload's round writes").Len() != 1 {
		t.Errorf("no log of the switch to enforce: %v", logs.All())
	}

	writeFile(t, path, "mode: observe\nrestore_on_exit: true\nbanned_cpus: 4\n")
	d.take(ctx, h, trigger(t, watch.CauseSIGHUP))
	if st := d.State(); w.writes() != 13 || st.Apply.DryRun == 0 || affinity(t, tree, 25) != "4" {
		t.Errorf("back to observe with CPU 4 banned: %d writes in all, %d dry run, IRQ 25 on %s; want none more, IRQ 25 left on 4",
			w.writes(), st.Apply.DryRun, affinity(t, tree, 25))
	}
	checkMode(t, d, config.ModeObserve)
	d.stop()
	if w.writes() != 13 || affinity(t, tree, 25) != "4" {
		t.Errorf("stop while observing, restore_on_exit: %d writes in all, IRQ 25 on %s; want no restore", w.writes(), affinity(t, tree, 25))
	}
}

// TestDryRunOverridesEnforce: --dry-run observes whatever mode says, at
// start and after a reload that changes it.
func TestDryRunOverridesEnforce(t *testing.T) {
	tree := fixture(t)
	w := &fileWriter{proc: tree.Proc()}
	path := filepath.Join(t.TempDir(), "numairqd.yaml")
	writeFile(t, path, "mode: enforce\n")
	core, logs := observer.New(zapcore.InfoLevel)
	d := newDaemon(t, tree, w, path, func(o *Options) { o.DryRun, o.Log = true, zap.New(core) })
	ctx, h := context.Background(), &hints{}
	d.take(ctx, h, trigger(t, watch.CauseResync))
	checkMode(t, d, config.ModeObserve)
	writeFile(t, path, "mode: observe\n")
	d.take(ctx, h, trigger(t, watch.CauseSIGHUP))
	writeFile(t, path, "mode: enforce\n")
	d.take(ctx, h, trigger(t, watch.CauseSIGHUP))
	if w.writes() != 0 || d.State().Apply.DryRun != 13 || affinity(t, tree, 25) != "0-7" {
		t.Errorf("--dry-run with mode: enforce: %d writes, %d dry run", w.writes(), d.State().Apply.DryRun)
	}
	checkMode(t, d, config.ModeObserve)
	if n := logs.FilterMessageSnippet("--dry-run keeps observing").Len(); n != 2 {
		t.Errorf("%d warnings that --dry-run keeps observing, want 2 (one per reload changing mode)", n)
	}
}

// TestObserveTracksNoFight: a fight begun while enforcing is dropped
// once observing: nothing is written, so nothing is defended.
func TestObserveTracksNoFight(t *testing.T) {
	tree := fixture(t)
	w := &fileWriter{proc: tree.Proc()}
	path := filepath.Join(t.TempDir(), "numairqd.yaml")
	writeFile(t, path, "mode: enforce\n")
	d := newDaemon(t, tree, w, path, nil)
	h := &hints{}
	d.take(context.Background(), h, trigger(t, watch.CauseResync))
	overwriteRounds(t, d, tree, h, watch.CauseResync, fight.Overwrites)
	if len(d.State().Fights) != 1 {
		t.Fatalf("fights %+v while enforcing, want IRQ 25's", d.State().Fights)
	}
	writeFile(t, path, "mode: observe\n")
	d.take(context.Background(), h, trigger(t, watch.CauseSIGHUP))
	overwriteRounds(t, d, tree, h, watch.CauseResync, 2*fight.Overwrites)
	if st := d.State(); len(st.Fights) != 0 || st.Apply.BackedOff != 0 || gauge(t, d, "numairqd_irqs_in_fight", "writer", fight.Unknown) != 0 {
		t.Errorf("observing: fights %+v, %d writes backed off; want none", st.Fights, st.Apply.BackedOff)
	}
}

// TestDryRunLogIsBoundedAtScale: a dry run's first round on the scale
// host (8192 IRQs) logs apply.DryRunShown would-be writes and one
// summary line at info, not one line per IRQ.
func TestDryRunLogIsBoundedAtScale(t *testing.T) {
	tree := fakesys.New(t)
	tree.AddScaleHost()
	core, logs := observer.New(zapcore.InfoLevel)
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, "", func(o *Options) { o.DryRun, o.Log = true, zap.New(core) })
	st, err := d.Round(context.Background(), watch.LabelStartup, inventory.DepthAll, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	would := logs.FilterMessage("dry run: would set IRQ affinity").Len()
	summary := logs.FilterMessageSnippet("dry run: writes not made this round").All()
	if st.Apply.DryRun < 1000 || would != apply.DryRunShown || len(summary) != 1 || summary[0].ContextMap()["irqs"] != int64(st.Apply.DryRun) {
		t.Fatalf("%d would-be writes: %d logged at info, summaries %v; want %d and one counting them all",
			st.Apply.DryRun, would, summary, apply.DryRunShown)
	}
	t.Logf("%d would-be writes, %d log lines at info", st.Apply.DryRun, logs.Len())
	if logs.Len() > 2*apply.DryRunShown {
		t.Errorf("%d lines at info: %v", logs.Len(), logs.All())
	}
}

// TestWatchConfigOff: with watch_config: false a write to the config
// file is logged and not applied; SIGHUP applies it.
func TestWatchConfigOff(t *testing.T) {
	tree := fixture(t)
	path := filepath.Join(t.TempDir(), "numairqd.yaml")
	writeFile(t, path, "watch_config: false\nlisten: \"\"\n")
	core, logs := observer.New(zapcore.InfoLevel)
	rec := newRecorder()
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, path, func(o *Options) { o.Notify, o.Log = rec, zap.New(core) })
	ctx, cancel := context.WithCancel(context.Background())
	hup := make(chan os.Signal, 1)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, hup) }()
	rec.waitFor(t, "READY=1")

	writeFile(t, path, "watch_config: false\nlisten: \"\"\nbanned_cpus: 4\n")
	eventually(t, "the change logged", func() bool { return logs.FilterMessageSnippet("watch_config is false").Len() > 0 })
	time.Sleep(2 * configSettle)
	if got := d.Config().BannedCPUs.String(); got != "" || affinity(t, tree, 25) != "4" {
		t.Errorf("a file write with watch_config: false applied: banned %q, IRQ 25 on %s", got, affinity(t, tree, 25))
	}
	hup <- syscall.SIGHUP
	eventually(t, "SIGHUP applies the file", func() bool { return d.Config().BannedCPUs.String() == "4" })
	eventually(t, "queue 0 off banned CPU 4", func() bool { return affinity(t, tree, 25) == "5" })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
