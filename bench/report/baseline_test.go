package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/bench/measure"
)

// numairqdRun is a synthetic numairqd boot of one repetition: every
// period (idle, churn, each event) costs cpuMS of schedstat time, every
// event's placement comes reactS after it, and VmHWM stays at hwmKB.
func numairqdRun(build string, cpuMS, reactS float64, hwmKB int64) measure.DaemonRun {
	dr := measure.DaemonRun{Daemon: "numairqd", Build: build, Cost: map[string]measure.CostSample{}}
	up, ns, rounds := 100.0, int64(0), 0
	sample := func() measure.CostSample {
		return measure.CostSample{
			UptimeS:   up,
			Stat:      fmt.Sprintf("42 (numairqd) S 1 1 1 0 -1 0 0 0 0 0 %d 0 0 0", ns/1e7),
			Status:    fmt.Sprintf("VmHWM:\t%d kB\nVmRSS:\t%d kB\n", hwmKB, hwmKB-100),
			Schedstat: fmt.Sprintf("%d 0 0\n", ns),
			IO:        fmt.Sprintf("syscr: %d\nsyscw: %d\n", 50*rounds, 10*rounds),
			Metrics:   fmt.Sprintf("numairqd_rounds_total{trigger=\"event\"} %d\nnumairqd_affinity_writes_total{result=\"ok\"} %d\n", rounds, 4*rounds),
		}
	}
	for _, kind := range []string{"idle", "churn", "offline", "online", "rebind"} {
		dr.Cost[kind+"-1-0"] = sample()
		up, ns, rounds = up+10, ns+int64(cpuMS*1e6), rounds+2
		dr.Cost[kind+"-1-1"] = sample()
		if kind == "idle" || kind == "churn" {
			continue
		}
		placed := measure.Map{"input.0": "4", "output.0": "4"}
		driver := measure.Map{"input.0": "0", "output.0": "0"}
		dr.Events = append(dr.Events, measure.Event{Rep: 1, Kind: kind,
			Watch: measure.Watch{Pre: placed, Baseline: driver, EndS: reactS + 2, Stop: "quiet",
				Samples: []measure.Sample{{T: 0, Affinity: driver}, {T: reactS, Affinity: placed}}},
			Plan: []byte(`{"devices":[{"irqs":[{"name":"virtio0-input.0","planned":"4"},{"name":"virtio0-output.0","planned":"4"}]}]}`)})
	}
	return dr
}

// TestBaselineRows: a baseline build's boot gets its own row, labelled
// with its revision, in every table that has one for numairqd, and the
// summary states the working tree's medians over the baseline's; the
// comparisons with irqbalance and the targets keep using the working
// tree's numairqd.
func TestBaselineRows(t *testing.T) {
	runs := []measure.DaemonRun{
		numairqdRun("abc1234", 10, 0.2, 10000),
		numairqdRun("", 12, 0.3, 8000),
	}
	w := &writer{meta: measure.Meta{Reps: 1, ChurnCycles: 5, Baseline: "abc1234"}}
	w.header(w.meta, "", "placement.png")
	w.reaction(runs)
	w.cost(runs)
	w.eventCost(runs)
	body := w.body.String()
	for _, row := range []string{
		"| CPU 5 offline | numairqd abc1234 | 0.20 s | 0.20 s | 1/1 | 1/1 |", // reaction
		"| CPU 5 offline | numairqd | 0.30 s | 0.30 s | 1/1 | 1/1 |",
		"| numairqd abc1234 | 0.01 (0.01–0.01) | 0.01 (0.01–0.01) | 10000 KiB |", // cost
		"| churn block (5 offline/online cycles of CPU 5) | numairqd abc1234 | 10.0 ms (10.0 ms–10.0 ms) |",
		"| churn block (5 offline/online cycles of CPU 5) | numairqd | 12.0 ms (12.0 ms–12.0 ms) |",
		"| virtio-net unbind + bind | numairqd abc1234 | 10.0 ms (10.0 ms–10.0 ms) |",
		"| numairqd abc1234 | 10000 KiB (9.8 MiB) | 9900 KiB |", // peak RSS
		"| numairqd | 8000 KiB (7.8 MiB) | 7900 KiB |",
	} {
		if !strings.Contains(body, row) {
			t.Errorf("no row %q in\n%s", row, body)
		}
	}
	if !strings.Contains(w.head.String(), "| baseline | numairqd built at abc1234") {
		t.Errorf("header has no baseline:\n%s", w.head.String())
	}
	want := "numairqd / numairqd abc1234 (this tree over the baseline build, medians; below 1 is better): CPU time per churn block (schedstat) 1.20x, reaction to offline 1.50x, reaction to online 1.50x, reaction to rebind 1.50x, peak RSS 0.80x"
	if !contains(w.ratios, want) {
		t.Errorf("ratios %q\nwant %q", w.ratios, want)
	}
	if !contains(w.targets, "peak RSS at most 10 MiB: numairqd 8000 KiB (7.8 MiB) — met") {
		t.Errorf("targets %q: not the working tree's numairqd", w.targets)
	}
	if !contains(w.targets, "numairqd's reaction medians to CPU offline, online and re-bind each below 0.1 s: offline 0.30 s, online 0.30 s, rebind 0.30 s — **not met**") {
		t.Errorf("targets %q: not the working tree's reactions", w.targets)
	}
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}
