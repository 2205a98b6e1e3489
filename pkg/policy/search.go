package policy

import (
	"cmp"
	"math"
	"slices"

	"github.com/numairqd/numairqd/pkg/load"
)

// search places units on CPUs to lower the busiest CPU's load.
type search struct {
	units    []unit
	devs     []balanceDev
	cpus     []int     // allowed CPUs, ascending
	fixed    []float64 // by CPU id: load the plan cannot move
	fixedVar []float64 // by CPU id: the squared standard error of fixed
	evals    int
}

func newSearch(pl *planner, l *load.Loads, inUnit map[int]bool) *search {
	n := pl.allowed.Last() + 1
	s := &search{units: pl.units, devs: pl.devs, cpus: pl.allowed.CPUs(), fixed: make([]float64, n), fixedVar: make([]float64, n)}
	for _, c := range l.CPUs {
		if pl.allowed.Contains(c.CPU) {
			s.fixed[c.CPU] += c.Unattributed
			s.fixedVar[c.CPU] += c.UnattributedNoise * c.UnattributedNoise
		}
	}
	for _, q := range l.IRQs {
		if !inUnit[q.IRQ] && pl.allowed.Contains(q.CPU) {
			s.fixed[q.CPU] += q.Load
			s.fixedVar[q.CPU] += q.Noise * q.Noise
		}
	}
	return s
}

// drop is how much to lowers from's peak, and its standard error.
func (s *search) drop(from, to []int) (drop, noise float64) {
	before, after := s.loadsOf(from), s.loadsOf(to)
	drop = s.peak(before) - s.peak(after)
	return drop, math.Sqrt(s.variance(from, s.busiest(before)) + s.variance(to, s.busiest(after)))
}

// variance is the squared standard error of cpu's load under assign.
func (s *search) variance(assign []int, cpu int) float64 {
	v := s.fixedVar[cpu]
	for i, c := range assign {
		if c == cpu {
			v += s.units[i].noise * s.units[i].noise
		}
	}
	return v
}

func (s *search) loadsOf(assign []int) []float64 {
	loads := slices.Clone(s.fixed)
	for i, c := range assign {
		loads[c] += s.units[i].load
	}
	return loads
}

// peak is the busiest allowed CPU's load.
func (s *search) peak(loads []float64) float64 {
	p := 0.0
	for _, c := range s.cpus {
		p = max(p, loads[c])
	}
	return p
}

func (s *search) mean(loads []float64) float64 {
	t := 0.0
	for _, c := range s.cpus {
		t += loads[c]
	}
	return t / float64(max(1, len(s.cpus)))
}

// busiest is the allowed CPU with the highest load, the lowest id on ties.
func (s *search) busiest(loads []float64) int {
	b := s.cpus[0]
	for _, c := range s.cpus {
		if loads[c] > loads[b] {
			b = c
		}
	}
	return b
}

func (s *search) movable(i int) bool { return s.units[i].load >= idleQueue }

// classOf is the class unit i's device gives cpu, -1 when it may not use it.
func (s *search) classOf(i, cpu int) int {
	if cl, ok := s.devs[s.units[i].bdev].class[cpu]; ok && s.units[i].near.Contains(cpu) {
		return cl
	}
	return -1
}

// split returns the busy units, heaviest first; their number per device
// and class; and the loads with the idle ones where from has them.
func (s *search) split(from []int) (busy []int, room [][]int, loads []float64) {
	room = make([][]int, len(s.devs))
	for d := range s.devs {
		room[d] = make([]int, len(s.devs[d].cpus))
	}
	loads = slices.Clone(s.fixed)
	for i, u := range s.units {
		if s.movable(i) {
			busy = append(busy, i)
			room[u.bdev][u.class]++
		} else {
			loads[from[i]] += u.load
		}
	}
	slices.SortStableFunc(busy, func(a, b int) int { return cmp.Compare(s.units[b].load, s.units[a].load) })
	return busy, room, loads
}

// moved counts the units a has away from where from has them.
func moved(a, from []int) int {
	n := 0
	for i := range a {
		if a[i] != from[i] {
			n++
		}
	}
	return n
}

// exact searches placements of the busy queues, per class, for a lower
// peak than start's or the same with fewer moves; past maxEvaluations
// it returns the best reached.
func (s *search) exact(start, from []int, maxMoves int) []int {
	return s.walk(start, from, maxMoves, math.Inf(1), false)
}

// fewest returns a placement of peak at most limit with the fewest
// moves from from (then lowest peak); start must be one.
func (s *search) fewest(start, from []int, limit float64) []int {
	s.evals = maxEvaluations - fewestEvaluations
	return s.walk(start, from, moved(start, from), limit, true)
}

// walk is exact's and fewest's depth-first search, heaviest queue
// first: the best by peak then moves (movesFirst: moves then peak)
// within maxMoves and limit; start must be within them.
func (s *search) walk(start, from []int, maxMoves int, limit float64, movesFirst bool) []int {
	const eps = 1e-12
	best := slices.Clone(start)
	bestPeak, bestMoves := s.peak(s.loadsOf(best)), moved(best, from)
	// beaten reports whether a (partial) placement of peak p and m moves
	// cannot beat the best; both only grow.
	beaten := func(p float64, m int) bool {
		if p > limit+eps || m > maxMoves {
			return true
		}
		if movesFirst {
			return m > bestMoves || (m == bestMoves && p >= bestPeak-eps)
		}
		return p > bestPeak+eps || (p > bestPeak-eps && m >= bestMoves)
	}
	busy, room, loads := s.split(from)
	assign := slices.Clone(from)
	total := 0.0 // every unit's load and the fixed load
	for i, u := range s.units {
		if s.movable(i) {
			total += u.load
		}
	}
	for _, c := range s.cpus {
		total += loads[c]
	}
	if bestMoves == 0 && (movesFirst || total/float64(len(s.cpus)) >= bestPeak-eps) {
		return best // nothing has fewer moves, or the mean bounds the peak
	}
	var dfs func(k, moves int, peak float64)
	dfs = func(k, moves int, peak float64) {
		if s.evals >= maxEvaluations {
			return
		}
		if k == len(busy) {
			if !beaten(peak, moves) {
				copy(best, assign)
				bestPeak, bestMoves = peak, moves
			}
			return
		}
		i := busy[k]
		u := s.units[i]
		try := func(c, cl int) {
			s.evals++
			m := moves
			if c != from[i] {
				m++
			}
			np := max(peak, loads[c]+u.load)
			if beaten(np, m) {
				return
			}
			assign[i] = c
			loads[c] += u.load
			room[u.bdev][cl]--
			dfs(k+1, m, np)
			room[u.bdev][cl]++
			loads[c] -= u.load
		}
		// Where from has it first: fewer moves are found first.
		if cl := s.classOf(i, from[i]); cl >= 0 && room[u.bdev][cl] > 0 {
			try(from[i], cl)
		}
		for cl, cpus := range s.devs[u.bdev].cpus {
			if room[u.bdev][cl] == 0 {
				continue
			}
			for _, c := range cpus {
				if c != from[i] && u.near.Contains(c) {
					try(c, cl)
				}
			}
		}
		assign[i] = from[i]
	}
	dfs(0, 0, s.peak(loads))
	return best
}
