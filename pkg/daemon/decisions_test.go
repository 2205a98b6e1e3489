package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/numairqd/numairqd/pkg/inventory"
)

// TestDebugLogsDecisions: at debug a round logs one line per device
// with its rule, policy, allowed CPUs and what moved and why; nothing
// per IRQ, and nothing of it at info.
func TestDebugLogsDecisions(t *testing.T) {
	tree := fixture(t)
	path := t.TempDir() + "/numairqd.yaml"
	writeFile(t, path, "listen: \"\"\nbanned_cpus: 7\ndevices:\n  - name: nic\n    match: {driver: virtio-pci}\n    policy: numa-hop\n")
	core, logs := observer.New(zap.DebugLevel)
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, path, func(o *Options) { o.Log = zap.New(core) })
	st, err := d.Round(context.Background(), "startup", inventory.DepthAll, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	lines := logs.FilterMessage("device decision").All()
	if len(lines) != len(st.Plan.Devices) || len(lines) < 2 {
		t.Fatalf("%d device lines for %d devices", len(lines), len(st.Plan.Devices))
	}
	var nic map[string]any
	for _, l := range lines {
		if f := l.ContextMap(); strings.HasPrefix(f["rule"].(string), `rule "nic"`) {
			nic = f
		}
	}
	if nic == nil {
		t.Fatalf("no line for the NIC's rule: %v", lines)
	}
	decisions, _ := nic["decisions"].([]any)
	// 13 IRQs moved: the first maxMovesLogged named with their reasons,
	// the rest counted.
	if why, _ := nic["policy_why"].(string); !strings.Contains(why, `set by rule "nic"`) {
		t.Errorf("NIC line's policy_why %q does not say why numa-hop", why)
	}
	if nic["policy"] != "numa-hop" || nic["allowed"] != "0-6" || nic["moved"] != int64(13) || len(decisions) != maxMovesLogged ||
		nic["decisions_not_shown"] != int64(13-maxMovesLogged) ||
		decisions[1] != "IRQ 25 virtio0-input.0 0-7 -> 4: numa-hop: queue 0 -> CPU 4, hop 0, distance 10 from node 2" {
		t.Errorf("NIC line %v, want numa-hop on 0-6 and the moves with their reasons", nic)
	}
	// Besides apply's line per write made, the round's debug lines are
	// one per device and one for the round.
	daemonLines := logs.FilterLevelExact(zapcore.DebugLevel).Filter(func(e observer.LoggedEntry) bool {
		return !strings.HasPrefix(e.Message, "wrote ")
	})
	if n := daemonLines.Len(); n != len(lines)+1 {
		t.Errorf("%d debug lines for %d devices, want one per device and one for the round: %v", n, len(lines), daemonLines.All())
	}

	// At info, none of it, and nothing is built.
	core, logs = observer.New(zap.InfoLevel)
	d = newDaemon(t, fixture(t), &fileWriter{proc: tree.Proc()}, path, func(o *Options) { o.Log = zap.New(core) })
	if _, err := d.Round(context.Background(), "startup", inventory.DepthAll, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if n := logs.FilterMessageSnippet("decision").Len(); n != 0 {
		t.Errorf("%d decision lines at info", n)
	}
}

// TestDryRunLogsAWouldBeWriteOnce: a dry-run daemon logs its would-be
// writes in the first round only, and the rounds after it, which would
// make the same writes, are "round done" at debug.
func TestDryRunLogsAWouldBeWriteOnce(t *testing.T) {
	tree := fixture(t)
	core, logs := observer.New(zap.InfoLevel)
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, "", func(o *Options) { o.Log, o.DryRun = zap.New(core), true })
	for round := 1; round <= 3; round++ {
		before := logs.Len()
		st, err := d.Round(context.Background(), "resync", inventory.DepthAll, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		var would, done int
		for _, e := range logs.All()[before:] {
			switch {
			case strings.HasPrefix(e.Message, "dry run: would"):
				would++
			case e.Message == "round done":
				done++
			}
		}
		if st.Apply.DryRun == 0 {
			t.Fatalf("round %d: no would-be writes", round)
		}
		if round == 1 && (would < st.Apply.DryRun || done != 1) || round > 1 && (would != 0 || done != 0) {
			t.Errorf("round %d: %d would-be writes logged at info, %d 'round done' at info (%d would-be writes)", round, would, done, st.Apply.DryRun)
		}
	}
}
