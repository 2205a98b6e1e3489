package apply_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"go.uber.org/zap/zapcore"

	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/policy"
)

// TestDryRunLogsOnceUntilChanged: a dry run logs each would-be write
// once, again only when its mask changes, or when its IRQ was gone (or
// in place) for a round and comes back, or its number comes back under
// another name; and it keeps nothing of IRQs the plan no longer writes.
func TestDryRunLogsOnceUntilChanged(t *testing.T) {
	log, logs := observed()
	a := apply.New(&fakeWriter{}, log, apply.Options{DryRun: true})
	for i, round := range []struct {
		what   string
		irqs   []policy.IRQ
		logged []string // "irq:to" of the lines logged
		kept   int
	}{
		{"first round", []policy.IRQ{irq(t, 45, "q0", "0-7", "3"), irq(t, 46, "q1", "0-7", "4")}, []string{"45:3", "46:4"}, 2},
		{"the same plan", []policy.IRQ{irq(t, 45, "q0", "0-7", "3"), irq(t, 46, "q1", "0-7", "4")}, nil, 2},
		{"45 changed, 46 gone", []policy.IRQ{irq(t, 45, "q0", "0-7", "6")}, []string{"45:6"}, 1},
		{"46 back", []policy.IRQ{irq(t, 45, "q0", "0-7", "6"), irq(t, 46, "q1", "0-7", "4")}, []string{"46:4"}, 2},
		{"46 reused by another IRQ", []policy.IRQ{irq(t, 45, "q0", "0-7", "6"), irq(t, 46, "nvme0q1", "0-7", "4")}, []string{"46:4"}, 2},
		{"45 put in place by someone", []policy.IRQ{irq(t, 45, "q0", "6", "6"), irq(t, 46, "nvme0q1", "0-7", "4")}, nil, 1},
		{"45 moved away again", []policy.IRQ{irq(t, 45, "q0", "0-7", "6"), irq(t, 46, "nvme0q1", "0-7", "4")}, []string{"45:6"}, 2},
		{"no device", nil, nil, 0},
	} {
		before := logs.Len()
		r := applyOnce(context.Background(), a, plan(order8, round.irqs...))
		var got []string
		for _, e := range logs.All()[before:] {
			if e.Level == zapcore.InfoLevel && e.Message == "dry run: would set IRQ affinity" {
				got = append(got, fmt.Sprintf("%d:%s", e.ContextMap()["irq"], e.ContextMap()["to"]))
			}
		}
		if !slices.Equal(got, round.logged) || r.DryRunLogged != len(round.logged) || a.DryRunRemembered() != round.kept {
			t.Errorf("round %d (%s): logged %q (DryRunLogged %d), keeps %d; want %q and %d kept",
				i+1, round.what, got, r.DryRunLogged, a.DryRunRemembered(), round.logged, round.kept)
		}
	}
}

// TestDryRunLogIsBounded: a round of many new would-be writes logs the
// first DryRunShown at info, the rest at debug, and one summary line
// counting them all; a round with nothing new logs neither.
func TestDryRunLogIsBounded(t *testing.T) {
	log, logs := observed()
	a := apply.New(&fakeWriter{}, log, apply.Options{DryRun: true})
	var irqs []policy.IRQ
	for n := range 40 {
		irqs = append(irqs, irq(t, 100+n, fmt.Sprint("q", n), "0-7", fmt.Sprint(n%8)))
	}
	for round, wantNew := range []int{40, 0} {
		before := logs.Len()
		r := applyOnce(context.Background(), a, plan(order8, irqs...))
		info, debug, summaries := 0, 0, 0
		for _, e := range logs.All()[before:] {
			switch {
			case e.Message == "dry run: would set IRQ affinity" && e.Level == zapcore.InfoLevel:
				info++
			case e.Message == "dry run: would set IRQ affinity" && e.Level == zapcore.DebugLevel:
				debug++
			case e.Message == "dry run: writes not made this round; GET /plan lists them all":
				summaries++
				f := e.ContextMap()
				if f["irqs"] != int64(40) || f["new"] != int64(wantNew) || f["new_shown"] != int64(apply.DryRunShown) {
					t.Errorf("round %d: summary %v, want 40 irqs, %d new, %d shown", round, f, wantNew, apply.DryRunShown)
				}
			}
		}
		wantInfo, wantSummaries := min(wantNew, apply.DryRunShown), min(wantNew, 1)
		if info != wantInfo || debug != wantNew-wantInfo || summaries != wantSummaries || r.DryRun != 40 {
			t.Errorf("round %d: %d info, %d debug, %d summary lines, %d dry-run writes; want %d, %d, %d and 40",
				round, info, debug, summaries, r.DryRun, wantInfo, wantNew-wantInfo, wantSummaries)
		}
	}
}

// TestSetDryRun: an Applier switched out of a dry run writes from its
// next Apply on, and switched back writes nothing and logs each
// would-be write anew.
func TestSetDryRun(t *testing.T) {
	w := &fakeWriter{}
	log, logs := observed()
	a := apply.New(w, log, apply.Options{DryRun: true})
	p := plan(order8, irq(t, 45, "q0", "0-7", "3"))
	if r := applyOnce(context.Background(), a, p); r.DryRun != 1 || len(w.reset()) != 0 {
		t.Fatalf("dry run: %+v", r)
	}
	a.SetDryRun(false)
	r := applyOnce(context.Background(), a, p)
	checkCalls(t, w.reset(), "45:3")
	if r.Written != 1 || r.DryRun != 0 {
		t.Errorf("after SetDryRun(false): written %d, dry run %d; want 1 and 0", r.Written, r.DryRun)
	}
	a.SetDryRun(true)
	before := logs.FilterMessage("dry run: would set IRQ affinity").Len()
	if r := applyOnce(context.Background(), a, p); r.DryRun != 1 || len(w.reset()) != 0 || r.DryRunLogged != 1 {
		t.Errorf("dry run again: %+v; want the write logged anew, not made", r)
	}
	if n := logs.FilterMessage("dry run: would set IRQ affinity").Len() - before; n != 1 {
		t.Errorf("dry run again logged %d would-be writes, want 1", n)
	}
}
