package measure

import (
	"math"
	"slices"
	"sort"
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
	return BoundWithin(loads, nil, unmovable)
}

// BoundWithin is Bound with queue i restricted to the CPUs allowed[i]
// lists (indexes into unmovable; a nil allowed or a nil allowed[i]
// means every CPU). A queue with no allowed CPU makes it NaN.
func BoundWithin(loads []float64, allowed [][]int, unmovable []float64) (ratio float64, exact bool) {
	n := len(unmovable)
	if n == 0 {
		return math.NaN(), false
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	total := 0.0
	for _, u := range unmovable {
		total += u
	}
	type queue struct {
		load float64
		cpus []int
	}
	var q []queue // the queues with load: an idle one goes anywhere
	free := true  // every queue may go to every CPU: CPUs of equal load are alike
	for i, l := range loads {
		if l <= 0 {
			continue
		}
		cpus := all
		if allowed != nil && allowed[i] != nil {
			cpus = allowed[i]
			free = free && len(cpus) == n
		}
		if len(cpus) == 0 {
			return math.NaN(), true
		}
		q = append(q, queue{l, cpus})
		total += l
	}
	if total <= 0 {
		return math.NaN(), true
	}
	sort.SliceStable(q, func(i, j int) bool { return q[i].load > q[j].load })
	cpu := slices.Clone(unmovable)
	// Longest processing time first gives the first incumbent.
	best := 0.0
	{
		l := slices.Clone(unmovable)
		for _, x := range q {
			c := x.cpus[0]
			for _, d := range x.cpus {
				if l[d] < l[c] {
					c = d
				}
			}
			l[c] += x.load
		}
		best = slices.Max(l)
	}
	rest := make([]float64, len(q)+1) // rest[i]: sum of q[i:]
	for i := len(q) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + q[i].load
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
		// Lower bounds: the peak so far, the mean of what is placed plus
		// what remains spread perfectly, and this queue on its least
		// loaded CPU.
		sum := rest[i]
		for _, l := range cpu {
			sum += l
		}
		least := math.Inf(1)
		for _, c := range q[i].cpus {
			least = min(least, cpu[c])
		}
		if max(peak, sum/float64(n), least+q[i].load) >= best-eps {
			return
		}
		var tried []float64
		for _, c := range q[i].cpus {
			if free {
				if slices.Contains(tried, cpu[c]) {
					continue // a CPU of the same load gives the same subtree
				}
				tried = append(tried, cpu[c])
			}
			if cpu[c]+q[i].load >= best-eps {
				continue
			}
			cpu[c] += q[i].load
			search(i+1, max(peak, cpu[c]))
			cpu[c] -= q[i].load
		}
	}
	search(0, slices.Max(unmovable))
	return best / (total / float64(n)), nodes <= boundNodes
}
