package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/numairqd/numairqd/bench/measure"
)

// baselineRatios adds to the summary the working tree's numairqd over
// the baseline build's (BENCH_BASELINE), for the medians a refactor
// must not make worse: CPU time per churn block, reaction to each
// event, peak RSS. churn and reacts are keyed by DaemonRun.Name.
func (w *writer) baselineRatios(runs []measure.DaemonRun, churn map[string]eventFigures, reacts map[string]map[string]measure.Summary) {
	if w.meta.Baseline == "" {
		return
	}
	base := "numairqd " + w.meta.Baseline
	peaks := map[string]float64{}
	for _, dr := range runs {
		if v := dr.PeakHWMKB(); v > 0 {
			peaks[dr.Name()] = float64(v)
		}
	}
	ratio := func(cur, old float64, ok bool) string {
		if !ok || math.IsNaN(cur) || math.IsNaN(old) || old <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.2fx", cur/old)
	}
	var parts []string
	nf, okN := churn["numairqd"]
	bf, okB := churn[base]
	nc, src := nf.cpu()
	bc, _ := bf.cpu()
	parts = append(parts, fmt.Sprintf("CPU time per churn block (%s) %s", src, ratio(nc, bc, okN && okB)))
	for _, kind := range []string{"offline", "online", "rebind"} {
		n, okN := reacts["numairqd"][kind]
		b, okB := reacts[base][kind]
		parts = append(parts, fmt.Sprintf("reaction to %s %s", kind, ratio(n.Median, b.Median, okN && okB && n.N > 0 && b.N > 0)))
	}
	n, okN := peaks["numairqd"]
	b, okB := peaks[base]
	parts = append(parts, "peak RSS "+ratio(n, b, okN && okB))
	w.ratios = append(w.ratios, fmt.Sprintf("numairqd / numairqd %s (this tree over the baseline build, medians; below 1 is better): %s", w.meta.Baseline, strings.Join(parts, ", ")))
}
