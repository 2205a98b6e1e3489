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
