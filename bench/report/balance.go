package main

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/numairqd/numairqd/bench/measure"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// balanceChart is the file name of the load-balancing chart, written
// next to the traffic chart.
const balanceChart = "balance.png"

// Issue 15's targets.
const (
	targetBoundSlack = 1.10 // load's peak/mean at most 10% above the bound
	targetMoves      = 2    // load moves in 10 minutes of steady traffic
)

// balanceResult is one run's Balance figures by state, as run.States.
type balanceResult struct {
	run     measure.TrafficRun
	figures []measure.BalanceFigures
	errs    []error
}

func balanceResults(runs []measure.TrafficRun) []balanceResult {
	var out []balanceResult
	for _, r := range runs {
		br := balanceResult{run: r}
		for _, st := range r.States {
			f, err := measure.Balance(st, r.PCIs())
			br.figures = append(br.figures, f)
			br.errs = append(br.errs, err)
		}
		out = append(out, br)
	}
	return out
}

// state returns the figures of the named state; "count" is also found
// as "numairqd", its name before load balancing existed.
func (br balanceResult) state(name string) (measure.BalanceFigures, bool) {
	for i, st := range br.run.States {
		if br.errs[i] == nil && (st.Name == name || name == "count" && st.Name == "numairqd") {
			return br.figures[i], true
		}
	}
	return measure.BalanceFigures{}, false
}

// balance writes the load-balancing section: every traffic run's
// states against the best whole-queue assignment, the stability run,
// and issue 15's targets.
func (w *writer) balance(results []balanceResult, chart string) {
	if len(results) == 0 {
		return
	}
	w.p("## Load balancing\n")
	w.p("`balance: count` (numairqd's queue-count rule) against `balance: load` (the same placement, then busy queues moved so that the busiest CPU's measured irq+softirq load drops; the load config spells out the defaults: 5 s samples, 30 s half-life, a move must lower the peak by 10%% and by 3%% of a CPU, by more than 3 standard errors of that drop, with the same proposal for 3 samples, at most 6 moves a minute) and irqbalance, in the traffic boots above and in skewed ones. Each state starts from the driver's placement; `load` runs 60 s under traffic before its window (3 samples of 5 s and the 30 s half-life), the others 25 s. Chart: [%s](%s), per-vCPU `%%soft` per state of the skewed cases, the dashed lines the bound's busiest vCPU (red: by packets, blue: by the cost fit).\n", chart, chart)
	w.p("- **peak/mean**: the busiest vCPU's `%%soft` over the mean of every online vCPU in the window (as in the traffic tables).")
	w.p("- **bound**: the best whole-queue assignment. A busy rx queue's load is its share of the window's rx packets (`guestcheck queue-packets`: the kernel's `qstats-get`, else virtio-net's `ethtool -S` `rx_queue_N_packets`, read just before and after the window) times the softirq time the queues explain: the online vCPUs' `%%soft` in all, less an *unmovable* part on every vCPU, estimated as the mean `%%soft` of the vCPUs that served under 1%% of the packets (a queue's packets are split over vCPUs as its interrupts were), and taken as 0 when every vCPU served queues. The bound is the least peak/mean that any assignment of whole queues to the online vCPUs gives with those loads (exact branch and bound, `measure.Bound`): no placement of whole queues can do better. It takes one per-packet cost for every queue and vCPU, and ignores NUMA distance: `load` keeps each queue within the hops `count` used, so where the bound needs a farther vCPU it is out of `load`'s reach by design.")
	w.p("- **bound, cost fit**: the same with the queues' time split by a fitted cost instead of by packets: per state, the least-squares `%%soft_c ≈ a·interrupts_c/s + b·packets_c/s` (a, b ≥ 0) over the vCPUs that served queues, each queue then weighing `a·its interrupts/s + b·its packets/s` (same total). Under TCG a lightly loaded queue takes an interrupt every few packets while a busy one polls many per interrupt, so the per-packet split overstates busy queues and its bound can exceed what a placement measured (ratio below 1); the fit is the check on that. Both keep the loads of the measured placement: a queue's cost when moved is taken to stay the same.")
	w.p("- **bound within count's hops, cost fit**: the cost-fit bound with each queue held to the CPUs at the distance from its NIC's node that `count` gave it (any CPU when a NIC has at least as many queues as vCPUs: numairqd's linear rule, one ring). `load` moves queues only within those hops (and keeps each hop's number of queues, which this bound does not), so it cannot go below this one; the gap between the two bounds is what locality costs.")
	w.p("- **ratio**: peak/mean over the bound (1 is the best whole-queue placement of that window's loads). **mean distance**: the interrupt-weighted NUMA distance of every queue IRQ from its NIC's node; after it, the plain mean over the busy rx queues (2%% of the packets or more) of the distance to the vCPU that took most of each one's interrupts, which depends on the placement only. **moves**: the increase of `numairqd_balance_moves_total{reason=\"load\"}` over the window (its value at the window's end, since numairqd started, in parentheses).\n")
	for _, br := range results {
		if br.run.Steady {
			w.steady(br)
			continue
		}
		w.balanceRun(br)
	}
	w.balanceTargets(results)
}

func (w *writer) balanceRun(br balanceResult) {
	r := br.run
	w.p("### %s: %s\n", r.Name, r.Title)
	if r.Skew != "" {
		w.p("Traffic: %s.\n", r.Skew)
	}
	head, sep := "| |", "|---|"
	for _, st := range r.States {
		head += " " + st.Name + " |"
		sep += "---|"
	}
	w.p("%s\n%s", head, sep)
	row := func(label string, cell func(measure.BalanceFigures) string) {
		line := "| " + label + " |"
		for i := range r.States {
			if br.errs[i] != nil {
				line += " " + br.errs[i].Error() + " |"
				continue
			}
			line += " " + cell(br.figures[i]) + " |"
		}
		w.p("%s", line)
	}
	row("peak/mean `%soft`", func(f measure.BalanceFigures) string { return fmt.Sprintf("**%.2f**", f.MaxOverMean) })
	row("bound", func(f measure.BalanceFigures) string { return boundCell(f) })
	row("ratio", func(f measure.BalanceFigures) string { return fmt.Sprintf("%.2f", f.Ratio) })
	row("bound, cost fit", func(f measure.BalanceFigures) string { return floatOrDash(f.FitBound, "%.2f") })
	row("ratio, cost fit", func(f measure.BalanceFigures) string { return floatOrDash(f.FitRatio, "%.2f") })
	row("bound within count's hops, cost fit", func(f measure.BalanceFigures) string { return floatOrDash(hopBound(br, f), "%.2f") })
	row("fit: `%soft` per 1k interrupts/s, per 1k packets/s", func(f measure.BalanceFigures) string {
		return fmt.Sprintf("%.2f, %.2f", 1000*f.FitIRQ, 1000*f.FitPkt)
	})
	row("mean distance (interrupts; busy queues)", func(f measure.BalanceFigures) string {
		return floatOrDash(f.MeanDist, "%.1f") + "; " + floatOrDash(f.QueueDist, "%.1f")
	})
	row("rx frames/s", func(f measure.BalanceFigures) string { return fmt.Sprintf("%.0f", f.RxPPS) })
	row("moves", func(f measure.BalanceFigures) string {
		if math.IsNaN(f.MovesTotal) {
			return "–"
		}
		return fmt.Sprintf("%s (%.0f)", floatOrDash(f.Moves, "%.0f"), f.MovesTotal)
	})
	w.loadSourceRow(br)
	row("unmovable `%soft` per vCPU", func(f measure.BalanceFigures) string {
		if f.IdleCPUs == 0 {
			return "ignored"
		}
		return fmt.Sprintf("%.1f (%d idle vCPUs)", f.Unmovable, f.IdleCPUs)
	})
	w.p("")
	if r.Skew == "" {
		return
	}
	w.p("Busy rx queues per state, `load %%soft @ vCPU` (queue loads from %s):\n", br.figures[0].Source)
	for i, st := range r.States {
		if br.errs[i] != nil {
			continue
		}
		w.p("- %s: %s", st.Name, queueList(br.figures[i], len(r.PCIs()) > 1))
	}
	w.p("")
}

// hopBound is the cost-fit bound with each queue held to the hop ring
// count's placement gave it (QueueLoad.Ring in the run's count state):
// a relaxation of what `balance: load` may do (it also keeps each
// ring's number of queues), so load cannot go below it.
func hopBound(br balanceResult, f measure.BalanceFigures) float64 {
	count, ok := br.state("count")
	if !ok {
		return math.NaN()
	}
	type key struct {
		pci   string
		queue int
	}
	rings := map[key][]int{}
	for _, q := range count.Queues {
		rings[key{q.PCI, q.Queue}] = q.Ring
	}
	idx := map[int]int{}
	for i, c := range f.CPUs {
		idx[c.CPU] = i
	}
	loads := make([]float64, len(f.Queues))
	allowed := make([][]int, len(f.Queues))
	for i, q := range f.Queues {
		loads[i] = q.FitLoad
		ring, ok := rings[key{q.PCI, q.Queue}]
		if !ok || ring == nil {
			continue
		}
		allowed[i] = []int{}
		for _, c := range ring {
			if j, ok := idx[c]; ok {
				allowed[i] = append(allowed[i], j)
			}
		}
	}
	unmovable := make([]float64, len(f.CPUs))
	for i := range unmovable {
		unmovable[i] = f.Unmovable
	}
	b, _ := measure.BoundWithin(loads, allowed, unmovable)
	return b
}

func boundCell(f measure.BalanceFigures) string {
	if math.IsNaN(f.Bound) {
		return "–"
	}
	if !f.BoundExact {
		return fmt.Sprintf("%.2f (search cut short)", f.Bound)
	}
	return fmt.Sprintf("%.2f", f.Bound)
}

func floatOrDash(v float64, format string) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf(format, v)
}

// queueList names the busy queues (at least guestinfo.BusyShare of the
// packets), busiest first.
func queueList(f measure.BalanceFigures, twoNICs bool) string {
	var total uint64
	for _, q := range f.Queues {
		total += q.Packets
	}
	qs := slices.Clone(f.Queues)
	sort.SliceStable(qs, func(i, j int) bool { return qs[i].Load > qs[j].Load })
	var out []string
	for _, q := range qs {
		if total == 0 || float64(q.Packets) < guestinfo.BusyShare*float64(total) {
			continue
		}
		name := fmt.Sprintf("q%d", q.Queue)
		if twoNICs {
			name = q.PCI[5:7] + "/" + name
		}
		out = append(out, fmt.Sprintf("%s %.1f @ %d", name, q.Load, q.CPU))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// steady writes the stability run: the load balancer's moves over its
// long window, and peak/mean minute by minute.
func (w *writer) steady(br balanceResult) {
	r := br.run
	w.p("### %s\n", r.Title)
	if len(r.States) == 0 || br.errs[0] != nil {
		w.p("No data: %v\n", br.errs)
		return
	}
	f, st := br.figures[0], r.States[0]
	w.p("Traffic: %s. Moves by load balancing between the scrape at minute 1 (after the warm-up) and the one %.0f minutes later: **%s** (%s since numairqd started); numairqd logged %d \"load balance moved queues\" steps in all. Over the window: peak/mean %.2f, bound %s, ratio %.2f, mean distance %s, %.0f rx frames/s.\n",
		r.Skew, f.Seconds/60, floatOrDash(f.Moves, "%.0f"), floatOrDash(f.MovesTotal, "%.0f"), moveLines(st.MoveLog), f.MaxOverMean, boundCell(f), f.Ratio, floatOrDash(f.MeanDist, "%.1f"), f.RxPPS)
	var per []string
	for i := 1; i < len(st.Samples); i++ {
		lw, err := guestinfo.LoadBetween(st.Samples[i-1], st.Samples[i])
		if err != nil {
			continue
		}
		if mx, mean := lw.SoftPct(measure.TopoOf(st.Before).Online); mean > 0 {
			per = append(per, fmt.Sprintf("%.2f", mx/mean))
		}
	}
	if len(per) > 0 {
		w.p("Peak/mean `%%soft` minute by minute: %s.\n", strings.Join(per, ", "))
	}
}

func moveLines(log string) int {
	n := 0
	for line := range strings.Lines(log) {
		if strings.Contains(line, "load balance moved queues") {
			n++
		}
	}
	return n
}

// balanceTargets adds issue 15's targets to the summary.
func (w *writer) balanceTargets(results []balanceResult) {
	for _, br := range results {
		r := br.run
		load, okL := br.state("load")
		if !okL {
			continue
		}
		switch {
		case r.Steady:
			if math.IsNaN(load.Moves) {
				w.targets = append(w.targets, fmt.Sprintf("issue 15, at most %d load moves in 10 minutes of steady traffic (%s): no metrics — not measured", targetMoves, r.Name))
				continue
			}
			mins := load.Seconds / 60
			w.targets = append(w.targets, fmt.Sprintf("issue 15, at most %d load moves in 10 minutes of steady traffic: %.0f in %.0f minutes (%s) — %s", targetMoves, load.Moves, mins, r.Name, verdict(load.Moves <= targetMoves && mins >= 9.5)+partial(mins)))
		case r.Skew != "":
			count, okC := br.state("count")
			irqb, okI := br.state("irqbalance")
			met := load.Ratio <= targetBoundSlack && (!okC || load.MaxOverMean <= count.MaxOverMean) && (!okI || load.MaxOverMean <= irqb.MaxOverMean)
			w.targets = append(w.targets, fmt.Sprintf("issue 15, %s: load's peak/mean within 10%% of the bound and no higher than count's or irqbalance's: load %.2f, bound %.2f (ratio %.2f; by the cost fit %.2f, ratio %.2f), count %s, irqbalance %s — %s",
				r.Name, load.MaxOverMean, load.Bound, load.Ratio, load.FitBound, load.FitRatio, peakOf(count, okC), peakOf(irqb, okI), verdict(met)))
		case r.Name == "numa4":
			count, okC := br.state("count")
			if !okC {
				continue
			}
			same := math.Abs(load.QueueDist-count.QueueDist) < 1e-9
			w.targets = append(w.targets, fmt.Sprintf("issue 15, four-node guest (even flows): load's mean distance equal to count's: over the busy queues load %.2f, count %.2f (interrupt-weighted %.2f and %.2f) — %s", load.QueueDist, count.QueueDist, load.MeanDist, count.MeanDist, verdict(same)))
		}
	}
}

func partial(mins float64) string {
	if mins < 9.5 {
		return " (window shortened by BENCH_STEADY_MINUTES: not the target's 10 minutes)"
	}
	return ""
}

func peakOf(f measure.BalanceFigures, ok bool) string {
	if !ok {
		return "missing"
	}
	return fmt.Sprintf("%.2f", f.MaxOverMean)
}

// balancePNG is the chart's path: beside the traffic chart.
func balancePNG(trafficPNG string) string {
	return filepath.Join(filepath.Dir(trafficPNG), balanceChart)
}

// loadSourceRow adds, for the load states, what weighed each NIC's
// queues (/plan's load_source at the window's end: the load state reads
// per-queue counters, load-estimate does not) and how far the daemon's
// queue shares were from the packets measured in the window.
func (w *writer) loadSourceRow(br balanceResult) {
	src, gap, any := "| queues weighed by (`load_source`) |", "| daemon's queue shares against the measured packet shares: largest gap, points |", false
	for i, st := range br.run.States {
		cell, g := "–", "–"
		if br.errs[i] == nil && len(st.Daemon) > 0 {
			var names []string
			for _, d := range st.Daemon {
				names = append(names, d.LoadSource)
			}
			cell, any = strings.Join(names, ", "), true
			g = floatOrDash(measure.ShareError(st.Daemon, br.figures[i]), "%.1f")
		}
		src += " " + cell + " |"
		gap += " " + g + " |"
	}
	if any {
		w.p("%s", src)
		w.p("%s", gap)
	}
}
