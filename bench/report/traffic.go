package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/numairqd/numairqd/bench/measure"
)

// trafficResult is one run with every state's figures, computed once
// for the section and the chart; a state that cannot be computed
// (errs[i]) is reported in the section and left out of the chart. The
// first result carries every run's load-balancing figures, steady run
// included, for the section and chart of its own (balance.go).
type trafficResult struct {
	run     measure.TrafficRun
	figures []measure.TrafficFigures // by state, as run.States
	errs    []error
	balance []balanceResult
}

// trafficResults are the runs' figures. The stability run (Steady: one
// long window) is among them but shown only in the load-balancing
// section (notSteady).
func trafficResults(runs []measure.TrafficRun) []trafficResult {
	var out []trafficResult
	for _, r := range runs {
		tr := trafficResult{run: r}
		for _, st := range r.States {
			f, err := measure.Traffic(st, r.PCI)
			tr.figures = append(tr.figures, f)
			tr.errs = append(tr.errs, err)
		}
		out = append(out, tr)
	}
	if len(out) > 0 {
		out[0].balance = balanceResults(runs)
	}
	return out
}

// traffic writes the traffic section: the same offered load in the
// driver's placement, with irqbalance and with numairqd (count and
// load), per guest; then the load-balancing section.
func (w *writer) traffic(all []trafficResult, chart string) {
	if len(all) == 0 {
		return
	}
	defer w.balance(all[0].balance, balanceChart)
	results := notSteady(all)
	if len(results) == 0 {
		return
	}
	w.p("## Traffic\n")
	w.p("Real frames through the lab: `test/trafficgen` writes %d UDP flows at %d frames/s (offered; the skewed cases below say theirs) from the host side of the guest's tap, inside the boot's own network namespace; the multi-queue tap spreads the flows over the rx queues by flow hash, and the guest's virtio-net receives them (rx interrupt, NAPI, NET_RX softirq) and drops them in the IP layer. Each state starts from the driver's own placement, runs %.0f s under load (irqbalance rebalances every 10 s; numairqd's `load` state %.0f s), then is measured over a %.0f s window from `/proc/interrupts`, `/proc/stat` and `/proc/softirqs` (`guestcheck sample`). `count` is numairqd with `balance: count`, `load` with `balance: load` (see *Load balancing*). Chart: [%s](%s), per-vCPU softirq time per state, bars coloured by NUMA distance from the NIC's node.\n",
		results[0].run.Flows, results[0].run.Rate, results[0].run.WarmupS, loadWarmupS(results), trafficWindowS(results[0]), chart, chart)
	w.p("The claim here is the *shape*, balance and locality, not throughput: every vCPU of the guest runs on the host's 2 cores under TCG, so spreading over more vCPUs does not raise packets/s and a busier placement can even lower it (the host's sender gets less CPU). Packets/s and drops are reported for completeness at a fixed offered load.\n")
	w.p("For comparison, the seeds: the MANA patch (4 vCPUs, 4 queues) measured per-vCPU `%%soft` 38.85 / 0.03 / 24.89 / 24.65 without it (max/mean 1.76, two queues on vCPU 0) and 15.42 / 15.85 / 14.99 / 14.51 with it (max/mean 1.04), and 15.65 against 7.73 Gbit/s at 20,480 TCP connections; mlx5's hop-ordered hints gave 1.8x throughput on real NICs. Gbit/s are beyond an emulated guest.\n")
	for _, tr := range results {
		w.trafficRun(tr)
	}
}

// notSteady leaves out the stability run.
func notSteady(results []trafficResult) []trafficResult {
	var out []trafficResult
	for _, tr := range results {
		if !tr.run.Steady {
			out = append(out, tr)
		}
	}
	return out
}

// loadWarmupS is the load state's warm-up (NaN without one).
func loadWarmupS(results []trafficResult) float64 {
	for _, tr := range results {
		for _, st := range tr.run.States {
			if st.Name == "load" && st.WarmupS > 0 {
				return st.WarmupS
			}
		}
	}
	return math.NaN()
}

func trafficWindowS(tr trafficResult) float64 {
	for _, f := range tr.figures {
		if f.Seconds > 0 {
			return f.Seconds
		}
	}
	return math.NaN()
}

func (w *writer) trafficRun(tr trafficResult) {
	r := tr.run
	w.p("### %s\n", r.Title)
	if r.Skew != "" {
		w.p("Traffic: %s.\n", r.Skew)
	}
	w.p("%d rx queues enabled. `%%soft` is the share of each vCPU's time in softirq; *busy IRQs* counts, per vCPU, the rx queue IRQs with at least 2%% of the window's rx interrupts that fired mostly there.\n", r.Enabled)
	var cpus []int
	for i, f := range tr.figures {
		if tr.errs[i] == nil && len(f.CPUs) > len(cpus) {
			cpus = cpus[:0]
			for _, c := range f.CPUs {
				cpus = append(cpus, c.CPU)
			}
		}
	}
	head := "| state |"
	sep := "|---|"
	for _, c := range cpus {
		head += fmt.Sprintf(" vCPU %d |", c)
		sep += "---|"
	}
	w.p("%s max/mean %%soft | busy IRQs per vCPU | rx frames/s | drops/s |", head)
	w.p("%s---|---|---|---|", sep)
	for i, st := range r.States {
		if tr.errs[i] != nil {
			w.p("| %s | %s |", st.Name, tr.errs[i])
			continue
		}
		f := tr.figures[i]
		row := "| " + st.Name + " |"
		busy := make([]string, 0, len(f.CPUs))
		for _, c := range f.CPUs {
			row += fmt.Sprintf(" %.1f |", c.SoftPct)
			busy = append(busy, fmt.Sprint(c.BusyIRQs))
		}
		w.p("%s **%.2f** | %s | %.0f | %.0f |", row, f.MaxOverMean, strings.Join(busy, " / "), f.RxPPS, f.DropsPS)
	}
	w.p("")
	w.trafficWins(tr)
	if len(tr.figures) == 0 || math.IsNaN(tr.figures[0].MeanDist) {
		return
	}
	var dists []int
	for i, f := range tr.figures {
		if tr.errs[i] == nil {
			for _, d := range measure.Distances(f.SoftByDist) {
				if !slices.Contains(dists, d) {
					dists = append(dists, d)
				}
			}
		}
	}
	slices.Sort(dists)
	w.p("Where the work landed, by NUMA distance from the NIC's node (10 is the NIC's own node): the share of the NIC's queue interrupts, then of all softirq time, on the CPUs at each distance.\n")
	head, sep = "| state | mean distance of interrupts |", "|---|---|"
	for _, d := range dists {
		head += fmt.Sprintf(" interrupts at %d |", d)
		sep += "---|"
	}
	for _, d := range dists {
		head += fmt.Sprintf(" softirq at %d |", d)
		sep += "---|"
	}
	w.p("%s\n%s", head, sep)
	for i, st := range r.States {
		if tr.errs[i] != nil {
			continue
		}
		f := tr.figures[i]
		row := fmt.Sprintf("| %s | %.1f |", st.Name, f.MeanDist)
		for _, d := range dists {
			row += fmt.Sprintf(" %.0f%% |", 100*f.ByDist[d])
		}
		for _, d := range dists {
			row += fmt.Sprintf(" %.0f%% |", 100*f.SoftByDist[d])
		}
		w.p("%s", row)
	}
	w.p("")
}

// trafficWins adds the run's max/mean %soft and mean interrupt distance
// of irqbalance and numairqd (its count state, "numairqd" in older runs)
// to the summary.
func (w *writer) trafficWins(tr trafficResult) {
	by := map[string]measure.TrafficFigures{}
	for i, st := range tr.run.States {
		if tr.errs[i] == nil {
			by[st.Name] = tr.figures[i]
		}
	}
	ib, okI := by["irqbalance"]
	nq, okN := by["count"]
	if !okN {
		nq, okN = by["numairqd"]
	}
	if !okI || !okN {
		return
	}
	w.compare(tr.run.Name+" under traffic, max/mean %soft over the vCPUs", ib.MaxOverMean, nq.MaxOverMean, true, "%.2f")
	if !math.IsNaN(ib.MeanDist) {
		w.compare(tr.run.Name+" under traffic, mean NUMA distance of the queue interrupts", ib.MeanDist, nq.MeanDist, true, "%.1f")
	}
}
