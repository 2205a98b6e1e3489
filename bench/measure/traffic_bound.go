package measure

import (
	"math"
	"slices"
)

// boundNodes caps the branch-and-bound search of Bound; the bench's
// guests (at most 16 busy queues on at most 8 CPUs) finish far below it.
const boundNodes = 20_000_000

// Bound is the best whole-queue assignment bound: the least value of
// (busiest CPU's load / mean CPU load) over every assignment of the
// queues (loads, whole: a queue's interrupts and NAPI run on one CPU)
// to the CPUs, where CPU c also carries unmovable[c] that no assignment
// moves. len(unmovable) is the number of CPUs, all of which count in
// the mean. It is the multiprocessor scheduling problem P||Cmax, solved
// exactly by branch and bound (largest queue first, CPUs of equal load
// tried once, pruned by the best assignment found and by the mean);
// exact is false when the search stopped at boundNodes, and the result
// is then the best assignment found. With no load at all it is NaN.
func Bound(loads, unmovable []float64) (ratio float64, exact bool) {
	n := len(unmovable)
	if n == 0 {
		return math.NaN(), false
	}
	total := 0.0
	for _, u := range unmovable {
		total += u
	}
	var q []float64 // the queues with load: an idle one goes anywhere
	for _, l := range loads {
		if l > 0 {
			q = append(q, l)
			total += l
		}
	}
	if total <= 0 {
		return math.NaN(), true
	}
	slices.SortFunc(q, func(a, b float64) int { return cmpDesc(a, b) })
	cpu := slices.Clone(unmovable)
	// Longest processing time first gives the first incumbent.
	best := 0.0
	{
		l := slices.Clone(unmovable)
		for _, x := range q {
			l[slices.Index(l, slices.Min(l))] += x
		}
		best = slices.Max(l)
	}
	rest := make([]float64, len(q)+1) // rest[i]: sum of q[i:]
	for i := len(q) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + q[i]
	}
	const eps = 1e-12
	nodes := 0
	var search func(i int, peak float64)
	search = func(i int, peak float64) {
		nodes++
		if nodes > boundNodes {
			return
		}
		if i == len(q) {
			if peak < best-eps {
				best = peak
			}
			return
		}
		// Lower bound: the peak so far, and the mean of what is placed
		// plus what remains spread perfectly.
		sum := rest[i]
		for _, l := range cpu {
			sum += l
		}
		if max(peak, sum/float64(n), slices.Min(cpu)+q[i]) >= best-eps {
			return
		}
		var tried []float64
		for c := range cpu {
			if slices.Contains(tried, cpu[c]) {
				continue // a CPU of the same load gives the same subtree
			}
			tried = append(tried, cpu[c])
			if cpu[c]+q[i] >= best-eps {
				continue
			}
			cpu[c] += q[i]
			search(i+1, max(peak, cpu[c]))
			cpu[c] -= q[i]
		}
	}
	search(0, slices.Max(unmovable))
	return best / (total / float64(n)), nodes <= boundNodes
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}
