package main

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"github.com/numairqd/numairqd/bench/measure"
)

// summ formats a summary as "median (min–max)" in seconds.
func summ(s measure.Summary) string {
	if s.N == 0 {
		return "–"
	}
	if s.N == 1 {
		return fmt.Sprintf("%.2f s", s.Median)
	}
	return fmt.Sprintf("%.2f s (%.2f–%.2f)", s.Median, s.Min, s.Max)
}

// reactions computes the reaction of every event of a daemon run.
func reactions(dr measure.DaemonRun) map[string][]measure.Reaction {
	out := map[string][]measure.Reaction{}
	for _, ev := range dr.Events {
		var r measure.Reaction
		switch dr.Daemon {
		case "irqbalance":
			r = measure.ReactIrqbalance(ev.Watch)
		default:
			plan, err := measure.PlanMap(ev.Plan)
			if err != nil {
				plan = nil
			}
			r = measure.ReactNumairqd(ev.Watch, plan)
		}
		out[ev.Kind] = append(out[ev.Kind], r)
	}
	return out
}

var eventTitle = map[string]string{
	"offline": "CPU 5 offline",
	"online":  "CPU 5 back online",
	"rebind":  "virtio-net unbind + bind",
}

func (w *writer) reaction(runs []measure.DaemonRun) {
	if len(runs) == 0 {
		return
	}
	w.p("## Reaction time\n")
	w.p("Guest: the 4-node guest (virtio-net 6 pairs on node 2, CPUs 4-5). One boot per daemon; the daemon runs in the background of the guest shell (`irqbalance --foreground` at its default 10 s interval; `numairqd run` with its default event sources). Each repetition does three events in turn, each measured by the guest agent `benchagent`, which does the write itself and then polls the queue IRQs' `smp_affinity_list` every 50 ms. Before each event the map must have been quiet for %s (irqbalance: longer than one 10 s tick) or %s (numairqd). Times are from the moment the event's writes returned (by then virtio-net's own hotplug callback or probe has already rewritten every queue affinity; that map is the *baseline*).\n",
		settleQuietDoc["irqbalance"], settleQuietDoc["numairqd"])
	w.p("- **first write**: the first poll at which any queue IRQ's list differs from the baseline.")
	w.p("- **own placement**: numairqd — the map it settled on: the poll of its last change, after which the map stayed unchanged for 2 s (the agent then stops), provided that map is not the driver's baseline, or is the baseline and equals numairqd's plan: numairqd can place everything before the event's write returns (its round after a CPU offline starts on the uevent, sent while the write is still in the kernel), and then the first poll already shows its placement. Whether that map equals `numairqd plan --format json`, run in the guest right after the watch for the same CPU set, is the *= plan* column. irqbalance — every queue IRQ on a subset of S = (CPUs its queue IRQs used just before the event ∪ CPUs the event brought online) ∩ online CPUs, counted from its first write after the event, and holding until the watch ends (3 s quiet or the window end). irqbalance re-places all IRQs after a hotplug (full rescan), so this asks for its *set* of CPUs back rather than each IRQ on its old CPU.\n")
	w.p("| event | daemon | first write | own placement | reached | = plan | watch |")
	w.p("|---|---|---|---|---|---|---|")
	own := map[string]map[string]measure.Summary{}
	var window float64
	for _, kind := range []string{"offline", "online", "rebind"} {
		for _, dr := range runs {
			rs := reactions(dr)[kind]
			var fw, ow []float64
			reached, matches := 0, 0
			for _, r := range rs {
				if r.MatchesPlan {
					matches++
				}
				if r.FirstWriteS >= 0 {
					fw = append(fw, r.FirstWriteS)
				}
				if r.OwnS >= 0 {
					ow = append(ow, r.OwnS)
					reached++
				}
				window = math.Max(window, r.EndS)
			}
			fws, ows := measure.Summarize(fw), measure.Summarize(ow)
			if own[kind] == nil {
				own[kind] = map[string]measure.Summary{}
			}
			own[kind][dr.Name()] = ows
			ownText := summ(ows)
			if reached < len(rs) {
				ownText += fmt.Sprintf("; **%d of %d never within the window**", len(rs)-reached, len(rs))
			}
			fwText := summ(fws)
			if len(fw) < len(rs) {
				fwText += fmt.Sprintf("; %d of %d no write", len(rs)-len(fw), len(rs))
			}
			plan := "n/a"
			if dr.Daemon == "numairqd" {
				plan = fmt.Sprintf("%d/%d", matches, len(rs))
				if matches < len(rs) {
					plan = "**" + plan + "**"
				}
			}
			w.p("| %s | %s | %s | %s | %d/%d | %s | %s |", eventTitle[kind], dr.Name(), fwText, ownText, reached, len(rs), plan, windowText(dr, kind))
		}
	}
	w.p("")
	for _, kind := range []string{"offline", "online", "rebind"} {
		a, b := own[kind]["irqbalance"], own[kind]["numairqd"]
		switch {
		case a.N > 0 && b.N > 0:
			w.ratios = append(w.ratios, fmt.Sprintf("reaction to %s (median time to own placement): irqbalance %.2f s, numairqd %.2f s — irqbalance takes %.1fx as long", eventTitle[kind], a.Median, b.Median, a.Median/b.Median))
			w.compare("reaction to "+eventTitle[kind]+" (median s)", a.Median, b.Median, true, "%.2f s")
		case b.N > 0:
			w.ratios = append(w.ratios, fmt.Sprintf("reaction to %s: numairqd %.2f s median; irqbalance never re-established its placement within the window", eventTitle[kind], b.Median))
			w.numaWins = append(w.numaWins, fmt.Sprintf("reaction to %s: irqbalance never within the window, numairqd %.2f s median", eventTitle[kind], b.Median))
		case a.N > 0:
			w.ratios = append(w.ratios, fmt.Sprintf("reaction to %s: irqbalance %.2f s median; numairqd never reached its plan within the window", eventTitle[kind], a.Median))
			w.irqbWins = append(w.irqbWins, fmt.Sprintf("reaction to %s: numairqd never reached its plan within the window, irqbalance %.2f s median", eventTitle[kind], a.Median))
		}
	}
	for _, dr := range runs {
		n := 0
		for _, ev := range dr.Events {
			if fromDriver(dr, ev) {
				n++
			}
		}
		if n > 0 {
			w.p("- **%s: %d of %d events started from the driver's own map**, not from a placement of %s: after the previous event (or the hotplug churn of the cost part) it had not re-placed the queue IRQs within the 60 s settle that precedes every event. For those events \"its own placement\" is measured against the CPUs of the driver's map, which any single-node placement satisfies. Marked * in the details.", dr.Name(), n, len(dr.Events), dr.Name())
		}
	}
	for _, dr := range runs {
		if len(dr.Settled.Samples) > 1 {
			w.p("- %s made its first placement %.1f s after it was started (settle watch).", dr.Name(), dr.Settled.Samples[1].T)
		}
	}
	w.p("")
	w.eventDetail(runs)
}

// driverMaps are the maps the driver itself set in a daemon run: the
// boot map and every event's baseline.
func driverMaps(dr measure.DaemonRun) []measure.Map {
	var out []measure.Map
	for _, d := range measure.Devices(dr.Start) {
		if d.Kind == "virtio-net" {
			out = append(out, d.QueueMap())
		}
	}
	for _, ev := range dr.Events {
		out = append(out, ev.Watch.Baseline)
	}
	return out
}

// fromDriver reports whether an event started from one of the driver's
// own maps, i.e. the daemon had not placed the IRQs since the previous
// event (the settle before it gave up after 60 s).
//
// A map that equals one of numairqd's own plans is its placement, even
// when it is also an event's baseline: numairqd often places everything
// before the event's write returns, so the first poll, the baseline,
// already shows its plan.
func fromDriver(dr measure.DaemonRun, ev measure.Event) bool {
	for _, e := range dr.Events {
		if plan, err := measure.PlanMap(e.Plan); err == nil && ev.Watch.Pre.Equal(plan) {
			return false
		}
	}
	for _, m := range driverMaps(dr) {
		if ev.Watch.Pre.Equal(m) {
			return true
		}
	}
	return false
}

// settleQuietDoc mirrors the thresholds in bench/qemu_test.go.
var settleQuietDoc = map[string]string{"irqbalance": "11 s", "numairqd": "3 s"}

func windowText(dr measure.DaemonRun, kind string) string {
	var max float64
	stops := map[string]int{}
	for _, ev := range dr.Events {
		if ev.Kind != kind {
			continue
		}
		max = math.Max(max, ev.Watch.EndS)
		stops[ev.Watch.Stop]++
	}
	return fmt.Sprintf("%d quiet, %d at the window; longest %.1f s", stops["quiet"], stops["window"], max)
}

// eventDetail lists every event with the maps, for a reader who wants
// to check the definitions against what happened.
func (w *writer) eventDetail(runs []measure.DaemonRun) {
	w.p("<details><summary>Every event: maps before, baseline (driver's rewrite), and at the end of the watch</summary>\n")
	w.p("| daemon | rep | event | first write | own | = plan | before (* = the driver's map) | baseline | end | numairqd plan |")
	w.p("|---|---|---|---|---|---|---|---|---|---|")
	for _, dr := range runs {
		rs := reactions(dr)
		idx := map[string]int{}
		for _, ev := range dr.Events {
			r := rs[ev.Kind][idx[ev.Kind]]
			idx[ev.Kind]++
			end := measure.Map{}
			if n := len(ev.Watch.Samples); n > 0 {
				end = ev.Watch.Samples[n-1].Affinity
			}
			planText, match := "", "n/a"
			if dr.Daemon == "numairqd" {
				plan, _ := measure.PlanMap(ev.Plan)
				planText, match = mapText(plan), fmt.Sprint(r.MatchesPlan)
			}
			before := mapText(ev.Watch.Pre)
			if fromDriver(dr, ev) {
				before = "* " + before
			}
			w.p("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |", dr.Name(), ev.Rep, ev.Kind, secs(r.FirstWriteS), secs(r.OwnS), match,
				before, mapText(ev.Watch.Baseline), mapText(end), planText)
		}
	}
	w.p("\nMaps list the CPU of input.0..N then output.0..N.\n\n</details>\n")
	mism := 0
	for _, dr := range runs {
		if dr.Name() != "numairqd" {
			continue
		}
		for _, rs := range reactions(dr) {
			for _, r := range rs {
				if r.OwnS >= 0 && !r.MatchesPlan {
					mism++
				}
			}
		}
	}
	if mism > 0 {
		w.p("**numairqd inconsistency:** in %d of the events the running daemon settled on a map that differs from what `numairqd plan` computes for the same CPU set right afterwards (see the last column of the details). The reaction time above is to the daemon's own settled map; it is not a time to the CLI's plan. This is a numairqd finding, not a bench artefact: both read the same sysfs/procfs.\n", mism)
	}
}

func secs(s float64) string {
	if s < 0 {
		return "never"
	}
	return fmt.Sprintf("%.2f", s)
}

func mapText(m measure.Map) string {
	var in, out []string
	for q := 0; ; q++ {
		a, ok1 := m[fmt.Sprintf("input.%d", q)]
		b, ok2 := m[fmt.Sprintf("output.%d", q)]
		if !ok1 && !ok2 {
			break
		}
		in, out = append(in, a), append(out, b)
	}
	return strings.Join(in, " ") + " / " + strings.Join(out, " ")
}

func (w *writer) cost(runs []measure.DaemonRun) {
	if len(runs) == 0 {
		return
	}
	w.p("## Cost\n")
	w.p("In the same boots as the reaction times, after the first placement and before the events: CPU time is utime+stime of the daemon's process from `/proc/PID/stat` (in USER_HZ=100 ticks, so 0.01 s resolution) over the period; VmHWM is from `/proc/PID/status` at the end of the last churn block (a high-water mark since start; the peak over the whole run is under [Cost per event](#cost-per-event)). %d idle periods of %.0f s, then %d churn blocks of %d offline/online cycles of CPU 5, 0.25 s apart, plus 2 s for the daemon to finish; median (min–max) over them. The floor (`benchagent floor`, see [Cost per event](#cost-per-event)) ran the churn blocks only, in a boot of its own. Under TCG every guest instruction is emulated, so absolute CPU times are inflated many times over a real machine; compare the ratio.\n",
		w.meta.Reps, w.meta.IdleS, w.meta.Reps, w.meta.ChurnCycles)
	w.p("| daemon | idle CPU time per period (s) | churn CPU time per block (s) | VmHWM after churn |")
	w.p("|---|---|---|---|")
	type costs struct {
		idle, churn measure.Summary
		hwmKB       int64
	}
	byDaemon := map[string]costs{}
	for _, dr := range runs {
		churnC, errs := dr.Costs("churn", w.meta.Reps)
		if len(churnC) == 0 {
			w.p("| %s | | error: %s | |", dr.Name(), errText(errs))
			continue
		}
		churn := pick(churnC, func(c measure.Cost) float64 { return c.CPUS })
		c := costs{churn: measure.Summarize(churn), hwmKB: churnC[len(churnC)-1].HWMKB}
		idleText := "not run"
		if dr.Daemon != "floor" {
			idleC, errs := dr.Costs("idle", w.meta.Reps)
			idle := pick(idleC, func(c measure.Cost) float64 { return c.CPUS })
			c.idle = measure.Summarize(idle)
			idleText = rangeText(idle, secs)
			if len(idle) == 0 {
				idleText = "error: " + errText(errs)
			}
		}
		byDaemon[dr.Name()] = c
		w.p("| %s | %s | %s | %d KiB |", dr.Name(), idleText, rangeText(churn, secs), c.hwmKB)
	}
	w.p("")
	a, okA := byDaemon["irqbalance"]
	b, okB := byDaemon["numairqd"]
	if okA && okB {
		// The churn ratio is under Cost per event, from schedstat.
		w.ratios = append(w.ratios,
			fmt.Sprintf("CPU time idle (median per period): irqbalance %.2f s, numairqd %.2f s (%s)", a.idle.Median, b.idle.Median, tickRatio(b.idle.Median, a.idle.Median)))
		// A difference of one USER_HZ tick is below the resolution.
		if math.Abs(a.idle.Median-b.idle.Median) > 0.011 {
			w.compare("CPU time idle (median)", a.idle.Median, b.idle.Median, true, "%.2f s")
		}
		if math.Abs(a.churn.Median-b.churn.Median) > 0.011 {
			w.compare("CPU time under hotplug churn (median)", a.churn.Median, b.churn.Median, true, "%.2f s")
		}
	}
}

// tickRatio is numa/irqb in words, minding the 0.01 s resolution.
func tickRatio(numa, irqb float64) string {
	switch {
	case numa == 0 && irqb == 0:
		return "both below one 0.01 s tick"
	case irqb == 0:
		return "irqbalance below one 0.01 s tick"
	case numa == 0:
		return "numairqd below one 0.01 s tick"
	}
	return fmt.Sprintf("numairqd/irqbalance %.1fx", numa/irqb)
}

// pick applies f to every cost.
func pick(cs []measure.Cost, f func(measure.Cost) float64) []float64 {
	out := make([]float64, 0, len(cs))
	for _, c := range cs {
		out = append(out, f(c))
	}
	return out
}

// goBench is the table of the working tree's benchmarks and benchstat's
// output; base is the revision they ran interleaved with, if any.
func (w *writer) goBench(out, benchstat []byte, base string) {
	w.p("## Go benchmarks (host)\n")
	run := parseGoBench(bytes.NewReader(out))
	runs := 0
	for _, b := range run.Benches {
		runs = max(runs, len(b.NsOp))
	}
	how := fmt.Sprintf("`go test -run '^$' -bench ... -count %d -benchmem`", runs)
	if base != "" {
		how = fmt.Sprintf("%d rounds of `-count 1 -benchmem`, each running the test binaries built at %s and those of the working tree one after the other (the first alternating), so that both saw the same host load; the table is the working tree's, benchstat compares %s with it by benchmark name, whatever package holds it (`-ignore pkg`)", runs, base, base)
	}
	w.p("%s on the host (2 shared cores), `TMPDIR=/dev/shm` for the fixtures. Median (min–max) of %d runs. Columns after allocs/op are the benchmarks' own metrics (`b.ReportMetric`), \"–\" where a benchmark reports none.\n", how, runs)
	head := "| package | benchmark | time/op | B/op | allocs/op |"
	rule := "|---|---|---|---|---|"
	for _, u := range run.Units {
		head += " " + u + " |"
		rule += "---|"
	}
	w.p("%s", head)
	w.p("%s", rule)
	for _, b := range run.Benches {
		row := fmt.Sprintf("| %s | %s | %s | %s | %s |", strings.TrimPrefix(b.Pkg, "github.com/numairqd/numairqd/"), b.Name,
			rangeText(b.NsOp, ns), rangeText(b.BytesOp, bytesText), rangeText(b.Alloc, count))
		for _, u := range run.Units {
			row += " " + rangeText(b.Extra[u], metricText) + " |"
		}
		w.p("%s", row)
	}
	w.p("")
	if len(run.Failed) > 0 {
		w.p("**go test reported failures:** %s. A benchmark that failed has no row, or only the runs before it failed; see the Go benchmark output (`$BENCH_WORK/gobench.txt`).\n", strings.Join(run.Failed, ", "))
	}
	if len(bytes.TrimSpace(benchstat)) > 0 {
		w.p("benchstat (golang.org/x/perf/cmd/benchstat, run with `go run pkg@version`, not a module dependency):\n")
		w.p("```\n%s\n```\n", strings.TrimSpace(string(benchstat)))
	}
}

// metricText formats a custom benchmark metric: integers as such,
// others with three significant digits.
func metricText(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

func rangeText(xs []float64, f func(float64) string) string {
	s := measure.Summarize(xs)
	if s.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Median), f(s.Min), f(s.Max))
}

func ns(x float64) string {
	switch {
	case x >= 1e9:
		return fmt.Sprintf("%.2f s", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.2f ms", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.2f µs", x/1e3)
	}
	return fmt.Sprintf("%.0f ns", x)
}

func bytesText(x float64) string {
	switch {
	case x >= 1<<20:
		return fmt.Sprintf("%.1f MiB", x/(1<<20))
	case x >= 1<<10:
		return fmt.Sprintf("%.1f KiB", x/(1<<10))
	}
	return fmt.Sprintf("%.0f B", x)
}

func count(x float64) string { return fmt.Sprintf("%.0f", x) }

func (w *writer) definitions() {
	w.p("## Definitions\n")
	w.p("- **queue IRQs**: `virtioN-input.k` and `virtioN-output.k`; queue index k. The config IRQ is a control IRQ, listed separately.")
	w.p("- **mean distance**: mean over queue IRQs of the NUMA distance (the guest's `nodeN/distance`) from the device's node to the IRQ's CPU. **An IRQ whose mask holds several CPUs counts as the mean over its CPUs** (and as 1/weight of an IRQ on each of its CPUs in the per-CPU counts).")
	w.p("- **ideal**: the same mean with queue k on the (k mod n)-th CPU of the spread order over the n allowed CPUs (online minus banned, isolated and nohz_full): the lowest mean possible when no CPU holds more than ceil(queues/n) queues. A daemon can go below it only by stacking queues on fewer, nearer CPUs.")
	w.p("- **spread order**: allowed CPUs sorted by distance from the device's node, then by id — the order of the kernel's `cpumask_local_spread()` (hop by hop). **linear order**: allowed CPUs by id (MANA's rule when queues outnumber CPUs; numairqd's `auto` policy switches to it then).")
	w.p("- **max IRQs/CPU**, **mean IRQs/used CPU**, **CPUs used**: counts of queue IRQs per CPU; the mean is over CPUs holding at least one.")
	w.p("- **IRQs on banned/isolated CPUs**: the device's IRQs, queues and control, whose mask includes a banned, isolated or nohz_full CPU.")
	w.p("- **Better**: lower mean distance, lower max per CPU, more CPUs used, more queues in spread order, fewer IRQs on banned CPUs. These can pull in different directions (stacking on local CPUs lowers the distance and raises the load per CPU); each is reported as measured.\n")
	w.p("## Caveats\n")
	w.p("- One run; the reaction and cost figures come from one boot per daemon, the placement from one boot per guest (irqbalance always ran first, then the reset, then numairqd), the traffic figures from one 20 s window per state and guest (driver, then irqbalance, then numairqd, in one boot).")
	w.p("- The placement, reaction and cost parts run without traffic: irqbalance's load-based moves have no load to act on there, and effective affinities lag. Their placement is irqbalance's zero-load first placement, which is what `--oneshot` gives; the traffic part shows it under load.")
	w.p("- Under traffic, packets/s is not a placement figure: every vCPU shares the host's 2 cores, so neither throughput nor drops can show what a spread buys on real hardware; the per-vCPU shares of softirq time and where the interrupts fire can.")
	w.p("- TCG on 2 host cores: reaction times include emulation overhead for both daemons; the 50 ms poll bounds their resolution.")
	w.p("- irqbalance's \"own placement\" test is set-based and so more lenient than numairqd's exact-plan test.\n")
}
