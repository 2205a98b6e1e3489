package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/numairqd/numairqd/pkg/inventory"
)

// TestSettingWarnings: a rule matching nothing, a banned CPU that does
// not exist and irqbalance's options numairqd does not follow are
// warned about once per config load, not every round; a changed
// environment file is warned about again; --banirq leaves its IRQ alone.
func TestSettingWarnings(t *testing.T) {
	tree := fixture(t)
	etc := t.TempDir()
	if err := os.Mkdir(filepath.Join(etc, "default"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(etc, "default", "irqbalance")
	writeFile(t, env, "IRQBALANCE_ARGS=\"--banirq=25 --hintpolicy=exact\"\n")
	cfg := filepath.Join(t.TempDir(), "numairqd.yaml")
	writeFile(t, cfg, "banned_cpus: \"999\"\ndevices:\n  - match: {interface: eht0}\n    policy: linear\n")
	core, logs := observer.New(zap.InfoLevel)
	w := &fileWriter{proc: tree.Proc()}
	d := newDaemon(t, tree, w, cfg, func(o *Options) { o.Etc, o.Log = etc, zap.New(core) })
	ctx := context.Background()
	round := func() {
		t.Helper()
		if _, err := d.Round(ctx, "resync", inventory.DepthAll, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{
		"rule": cfg + `:3: devices[0] matches no device or IRQ here (match interface "eht0"; did you mean eth0?); it applies to any that appear`,
		"cpu":  cfg + ": banned_cpus: CPUs 999 do not exist here (possible CPUs 0-7); banned should they appear",
		"hint": env + ":1: IRQBALANCE_ARGS --hintpolicy=exact: numairqd ignores affinity_hint and spreads by NUMA distance; use a device rule",
		"pid":  env + ":1: IRQBALANCE_ARGS --pid=/run/i.pid: numairqd writes no pid file; systemd tracks it",
	}
	check := func(when string, counts map[string]int) {
		t.Helper()
		for key, n := range counts {
			if got := logs.FilterMessage(want[key]).Len(); got != n {
				t.Errorf("%s: %q logged %d times, want %d", when, want[key], got, n)
			}
		}
	}
	round()
	round()
	check("two rounds", map[string]int{"rule": 1, "cpu": 1, "hint": 1, "pid": 0})
	for _, dev := range d.State().Plan.Devices {
		for _, q := range dev.IRQs {
			if q.Number == 25 && (!q.LeftAlone() || q.Reason != "left alone: banned by irqbalance's --banirq in "+env) {
				t.Errorf("IRQ 25: planned %s, %s", q.Planned, q.Reason)
			}
		}
	}
	if e := logs.FilterMessage("banned CPUs from other tools").All(); len(e) != 1 || fmt.Sprint(e[0].ContextMap()["irqbalance_banned_irqs"]) != "[25]" {
		t.Errorf("bans logged %v, want once with IRQ 25", e)
	}
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	round()
	round()
	check("reloaded", map[string]int{"rule": 2, "cpu": 2, "hint": 2, "pid": 0})
	writeFile(t, env, "IRQBALANCE_ARGS=\"--banirq=25 --hintpolicy=exact --pid=/run/i.pid\"\n")
	round()
	round()
	check("the file changed", map[string]int{"rule": 2, "cpu": 2, "hint": 3, "pid": 1})
	if n := logs.FilterMessageSnippet("banned_cpus").Len() + logs.FilterMessageSnippet("IRQBALANCE_ARGS").Len(); n != 2+4 {
		t.Errorf("%d warnings in all, want 6: %v", n, strings.Join(messages(logs), "\n"))
	}
}

func messages(logs *observer.ObservedLogs) []string {
	var out []string
	for _, e := range logs.All() {
		out = append(out, e.Message)
	}
	return out
}
