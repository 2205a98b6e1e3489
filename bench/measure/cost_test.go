package measure

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

const procIO = `rchar: 48213
wchar: 1877
syscr: 412
syscw: 37
read_bytes: 0
write_bytes: 0
cancelled_write_bytes: 0
`

func TestParseIO(t *testing.T) {
	io, err := ParseIO(procIO)
	if err != nil {
		t.Fatal(err)
	}
	if io != (IO{SyscR: 412, SyscW: 37, RChar: 48213, WChar: 1877}) {
		t.Errorf("ParseIO = %+v", io)
	}
	for _, bad := range []string{
		"",
		"cat: can't open '/proc/260/io': No such file or directory\n",
		"rchar: 1\nwchar: 2\nsyscr: 3\n", // no syscw
		"syscr: x\nsyscw: 1\n",
	} {
		if io, err := ParseIO(bad); err == nil {
			t.Errorf("ParseIO(%q) = %+v, want an error", bad, io)
		}
	}
}

func TestSchedstatNS(t *testing.T) {
	ns, n, err := SchedstatNS("12000000 300 41\n3000000 10 7\n")
	if err != nil || ns != 15000000 || n != 2 {
		t.Errorf("SchedstatNS = %d, %d, %v", ns, n, err)
	}
	if _, _, err := SchedstatNS("cat: can't open '/proc/1/task/*/schedstat'\n"); err == nil {
		t.Error("SchedstatNS accepted an error message")
	}
}

func TestPromSums(t *testing.T) {
	text := `# HELP numairqd_rounds_total Reconcile rounds run.
# TYPE numairqd_rounds_total counter
numairqd_rounds_total{trigger="event"} 12
numairqd_rounds_total{trigger="resync"} 1
numairqd_rounds_total{trigger="start"} 1
numairqd_affinity_writes_total{result="ok"} 40
numairqd_affinity_writes_total{result="managed"} 300
numairqd_round_duration_seconds_sum 1.5e-01
garbage line{
`
	s := PromSums(text)
	if s[RoundsMetric] != 14 || s[WritesMetric] != 340 || s["numairqd_round_duration_seconds_sum"] != 0.15 {
		t.Errorf("PromSums = %v", s)
	}
	if w := promWritten(text); w != 40 {
		t.Errorf("promWritten = %v, want 40", w)
	}
	if w := promWritten(""); !math.IsNaN(w) {
		t.Errorf("promWritten(\"\") = %v, want NaN", w)
	}
}

// probe builds costProbe's output with the sections in the given order.
func probe(order []string, sec map[string]string) string {
	var b strings.Builder
	for _, name := range order {
		b.WriteString("=== " + name + "\n" + sec[name])
	}
	return b.String()
}

func TestParseCostSample(t *testing.T) {
	sec := map[string]string{
		"uptime":  "12.34\n",
		"stat":    "260 (numairqd) S 1 0 0 0 -1 0 0 0 0 0 7 3 0 0 20 0\n",
		"status":  "Name:\tnumairqd\nVmHWM:\t 9000 kB\nVmRSS:\t 8000 kB\n",
		"io":      procIO,
		"metrics": "numairqd_rounds_total{trigger=\"event\"} 3\n",
	}
	// Scrape first (the sample opening a period) or last (closing it).
	for _, order := range [][]string{
		{"metrics", "uptime", "stat", "status", "io"},
		{"uptime", "stat", "status", "io", "metrics"},
	} {
		c, err := ParseCostSample(probe(order, sec))
		if err != nil {
			t.Fatal(err)
		}
		if c.UptimeS != 12.34 || !strings.HasPrefix(c.Stat, "260 (numairqd)") || !strings.Contains(c.Status, "VmHWM") ||
			c.IO != procIO || c.Metrics != sec["metrics"] {
			t.Errorf("ParseCostSample(%v) = %+v", order, c)
		}
	}
	if _, err := ParseCostSample(probe([]string{"uptime", "stat"}, sec)); err == nil {
		t.Error("ParseCostSample accepted output without status")
	}
	// irqbalance: no metrics section; io may be an error message.
	sec["io"] = "cat: can't open '/proc/260/io': No such file or directory\n"
	c, err := ParseCostSample(probe([]string{"uptime", "stat", "status", "io"}, sec))
	if err != nil || c.Metrics != "" || c.IO != sec["io"] {
		t.Errorf("ParseCostSample without metrics = %+v, %v", c, err)
	}
}

func TestCostBetweenIOAndRounds(t *testing.T) {
	stat := "260 (numairqd) S 1 0 0 0 -1 0 0 0 0 0 %d 0 0 0 20 0"
	mk := func(up float64, ticks int, syscr, syscw int, rounds, written string) CostSample {
		return CostSample{
			UptimeS:   up,
			Stat:      strings.Replace(stat, "%d", strconv.Itoa(ticks), 1),
			Status:    "VmHWM:\t 9000 kB\nVmRSS:\t 8000 kB\n",
			Schedstat: strconv.Itoa(ticks*1e7+ticks) + " 0 0\n1000 0 0\n",
			IO:        "syscr: " + strconv.Itoa(syscr) + "\nsyscw: " + strconv.Itoa(syscw) + "\n",
			Metrics:   rounds + written,
		}
	}
	a := mk(100, 10, 1000, 50, "numairqd_rounds_total{trigger=\"event\"} 5\n", "numairqd_affinity_writes_total{result=\"ok\"} 7\n"+
		"numairqd_event_to_applied_seconds_sum 0.5\nnumairqd_event_to_applied_seconds_count 4\n")
	b := mk(110, 35, 1800, 90, "numairqd_rounds_total{trigger=\"event\"} 13\nnumairqd_rounds_total{trigger=\"resync\"} 2\n", "numairqd_affinity_writes_total{result=\"ok\"} 27\n"+
		"numairqd_event_to_applied_seconds_sum 0.8\nnumairqd_event_to_applied_seconds_count 6\n")
	c, err := CostBetween(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(c.RunS-0.250000025) > 1e-12 {
		t.Errorf("RunS = %v, want 0.250000025", c.RunS)
	}
	if c.CPUS != 0.25 || c.PeriodS != 10 || c.HWMKB != 9000 || c.RSSKB != 8000 || c.Syscalls != 840 || c.Rounds != 10 || c.Writes != 20 || c.IOErr != nil {
		t.Errorf("CostBetween = %+v", c)
	}
	if math.Abs(c.AppliedS-0.15) > 1e-12 {
		t.Errorf("AppliedS = %v, want (0.8-0.5)/(6-4) = 0.15", c.AppliedS)
	}
	if got := c.PerRound(c.Syscalls); got != 84 {
		t.Errorf("PerRound(syscalls) = %v, want 84", got)
	}
	// No metrics (irqbalance, the floor), no io (a kernel without task
	// I/O accounting): NaN, not zero.
	a.Metrics, b.Metrics, b.IO, b.Schedstat = "", "", "cat: can't open '/proc/260/io'\n", ""
	c, err = CostBetween(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(c.Syscalls) || !math.IsNaN(c.RunS) || c.IOErr == nil || !math.IsNaN(c.Rounds) || !math.IsNaN(c.Writes) || !math.IsNaN(c.AppliedS) || !math.IsNaN(c.PerRound(1)) {
		t.Errorf("CostBetween without io and metrics = %+v", c)
	}
}

func TestCostsAndPeak(t *testing.T) {
	s := func(ticks string, hwm string) CostSample {
		return CostSample{Stat: "1 (d) S 1 0 0 0 -1 0 0 0 0 0 " + ticks + " 0 0 0", Status: "VmHWM:\t" + hwm + " kB\n"}
	}
	dr := DaemonRun{Daemon: "floor", Cost: map[string]CostSample{
		"churn-1-0": s("1", "3000"), "churn-1-1": s("4", "3100"),
		"churn-2-0": s("4", "3100"), "churn-2-1": s("9", "3500"),
		"churn-3-0": s("9", "3500"), // rep 3 lost its closing sample
		"idle-1-0":  s("0", "2000"),
	}}
	cs, errs := dr.Costs("churn", 3)
	if len(cs) != 2 || cs[0].CPUS != 0.03 || cs[1].CPUS != 0.05 {
		t.Errorf("Costs = %+v", cs)
	}
	if len(errs) != 1 || !strings.Contains(errors.Join(errs...).Error(), "rep 3") {
		t.Errorf("Costs errors = %v, want one for rep 3", errs)
	}
	up := map[string]float64{"idle-1-0": 1, "churn-1-0": 2, "churn-1-1": 3, "churn-2-0": 4, "churn-2-1": 5, "churn-3-0": 6}
	for k, v := range dr.Cost {
		v.Schedstat = strings.Fields(v.Stat)[13] + "0000000 0 0\n" // 10 ms a tick
		v.UptimeS = up[k]
		dr.Cost[k] = v
	}
	if total, in := dr.Accounted([]string{"churn"}, 2); math.Abs(total-0.09) > 1e-9 || math.Abs(in-0.08) > 1e-9 {
		t.Errorf("Accounted = %v, %v; want 0.09 from first to last, 0.08 in the periods", total, in)
	}
	if _, in := dr.Accounted([]string{"churn"}, 3); !math.IsNaN(in) {
		t.Errorf("Accounted with a missing sample = %v, want NaN", in)
	}
	if p := dr.PeakHWMKB(); p != 3500 {
		t.Errorf("PeakHWMKB = %d, want 3500", p)
	}
}
