package main

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/api"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
)

// queueRun is one line of a device in the text view: a control IRQ, a
// queue, or consecutive queues placed alike (64 queues on 64 CPUs).
type queueRun struct {
	label, now, planned, node, hop, dist, why string
	rate                                      float64
	legend                                    int // legendStep, legendAll
}

// queueEntry is an IRQ, or a queue's IRQs that agree in all shown.
type queueEntry struct {
	queue        int // -1: a control IRQ
	irq          int
	now, planned string
	hop, dist    int
	why          string
	rate         float64
}

// queueRuns compacts d's IRQs: first the IRQs of one queue that agree,
// then runs of queues k, k+1, ... whose CPUs are one mask or step one
// CPU a queue, at one hop and distance, whose reasons differ only in
// numbers that step too ("queue 0-1 -> CPU 4-5").
func queueRuns(d policy.Device, st *api.Status, nodes map[int]int, r *rates) []queueRun {
	failed := map[int]api.StatusFailed{}
	for _, f := range st.Failed {
		failed[f.IRQ] = f
	}
	irqs := slices.Clone(d.IRQs)
	slices.SortStableFunc(irqs, func(a, b policy.IRQ) int {
		return cmp.Or(cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Number, b.Number))
	})
	var entries []queueEntry
	for _, q := range irqs {
		e := queueEntry{queue: q.Queue, irq: q.Number, now: q.Current.String(), planned: q.Planned.String(), hop: q.Hop, dist: q.Distance, why: q.Reason, rate: -1}
		if r != nil && r.IRQs != nil {
			e.rate = r.IRQs[strconv.Itoa(q.Number)]
		}
		if f, ok := failed[q.Number]; ok {
			words := []string{strings.ToUpper(f.State)}
			if f.Kind != "" || f.Errno != "" {
				words = append(words, strings.TrimSpace(f.Kind+" "+f.Errno))
			}
			if f.Effective != "" {
				words = append(words, "effective "+f.Effective)
			}
			e.why = strings.Join(words, " ") + ": " + q.Reason
		}
		if n := len(entries); n > 0 && e.queue >= 0 && sameQueue(entries[n-1], e) {
			if e.rate >= 0 {
				entries[n-1].rate += e.rate
			}
			continue
		}
		entries = append(entries, e)
	}
	var out []queueRun
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && extends(entries[i:j], entries[j]) {
			j++
		}
		out = append(out, runOf(entries[i:j], nodes))
		i = j
	}
	return out
}

func sameQueue(a, b queueEntry) bool {
	return a.queue == b.queue && a.now == b.now && a.planned == b.planned && a.hop == b.hop && a.dist == b.dist && a.why == b.why
}

// extends says whether e continues the run, comparing it with the
// run's first and last entry only: a device compacts in linear time.
func extends(run []queueEntry, e queueEntry) bool {
	first, last := run[0], run[len(run)-1]
	if last.queue < 0 || e.queue != last.queue+1 || e.hop != last.hop || e.dist != last.dist {
		return false
	}
	n := len(run) // e's index in the run
	return maskContinues(first.now, last.now, e.now, n) && maskContinues(first.planned, last.planned, e.planned, n) &&
		wordsContinue(first.why, last.why, e.why, n)
}

// maskContinues says whether mask m at index n continues a run of
// masks from first to last: all alike, or CPUs first, first+1, ...
func maskContinues(first, last, m string, n int) bool {
	return (m == first && last == first) || steps(first, last, m, n)
}

// wordsContinue says whether sentence s at index n continues a run of
// sentences from first to last whose words are alike or step.
func wordsContinue(first, last, s string, n int) bool {
	fw, lw, sw := strings.Split(first, " "), strings.Split(last, " "), strings.Split(s, " ")
	if len(sw) != len(fw) || len(lw) != len(fw) {
		return false
	}
	for k := range fw {
		if sw[k] == fw[k] && lw[k] == fw[k] {
			continue
		}
		num, tail := splitNumber(fw[k])
		ln, lt := splitNumber(lw[k])
		sn, st := splitNumber(sw[k])
		if lt != tail || st != tail || !steps(num, ln, sn, n) {
			return false
		}
	}
	return true
}

// steps says whether the integers first, last and next are start,
// start+n-1 and start+n, written as strconv writes them.
func steps(first, last, next string, n int) bool {
	start, err := strconv.Atoi(first)
	return err == nil && first == strconv.Itoa(start) && last == strconv.Itoa(start+n-1) && next == strconv.Itoa(start+n)
}

// runOf is the line of a run of entries.
func runOf(run []queueEntry, nodes map[int]int) queueRun {
	first, last := run[0], run[len(run)-1]
	r := queueRun{hop: intOrDash(first.hop), dist: intOrDash(first.dist)}
	switch {
	case first.queue < 0:
		r.label = "irq " + strconv.Itoa(first.irq)
	case len(run) == 1:
		r.label = "q" + strconv.Itoa(first.queue)
	default:
		r.label = "q" + strconv.Itoa(first.queue) + "-" + strconv.Itoa(last.queue)
	}
	where := cpumask.Mask{}
	for _, e := range run {
		m, _ := cpumask.ParseList(cmp.Or(e.planned, e.now))
		where = where.Or(m)
		if e.rate >= 0 {
			r.rate += e.rate
		} else {
			r.rate = -1
		}
	}
	var nowKey, plannedKey int
	r.now, nowKey = joinMasks(first.now, last.now, len(run))
	r.planned, plannedKey = joinMasks(first.planned, last.planned, len(run))
	r.planned = cmp.Or(r.planned, "(left alone)")
	r.legend = nowKey | plannedKey
	r.why = joinWords(first.why, last.why)
	var ns cpumask.Mask
	for cpu := range where.All() {
		if n, ok := nodes[cpu]; ok {
			ns = ns.Or(cpumask.New(n))
		}
	}
	r.node = cmp.Or(ns.String(), "-")
	return r
}

// joinMasks shows a run's masks, given its first and last (extends
// has checked the rest): the mask of one queue, "all M" when every
// queue has M, "a-b" for the single CPUs a, a+1, ..., b; and the
// legend entry that the last two need.
func joinMasks(first, last string, n int) (string, int) {
	switch {
	case n == 1 || first == "":
		return first, 0
	case first == last:
		return "all " + first, legendAll
	}
	return first + "-" + last, legendStep
}

// joinWords merges a run's reasons, given its first and last: each
// integer that steps from one to the next becomes "a-b".
func joinWords(first, last string) string {
	fw, lw := strings.Split(first, " "), strings.Split(last, " ")
	for k := range fw {
		if fw[k] != lw[k] {
			num, tail := splitNumber(fw[k])
			end, _ := splitNumber(lw[k])
			fw[k] = num + "-" + end + tail
		}
	}
	return strings.Join(fw, " ")
}

// splitNumber splits "12," into "12" and ",".
func splitNumber(w string) (num, tail string) {
	i := 0
	for i < len(w) && w[i] >= '0' && w[i] <= '9' {
		i++
	}
	return w[:i], w[i:]
}

func intOrDash(n int) string {
	if n < 0 {
		return "-"
	}
	return strconv.Itoa(n)
}
