package policy

import (
	"math"
	"slices"
)

// exact searches placements of the busy queues, keeping each device's
// queues per class, for a lower peak than start's (the best known) or
// the same peak with fewer moves. It is exact for the few busy queues
// of a lab or a NIC; past maxEvaluations it returns the best reached.
func (s *search) exact(start, from []int, maxMoves int) []int {
	return s.walk(start, from, maxMoves, math.Inf(1), false)
}

// fewest returns, of the placements whose peak is at most limit, one
// with the fewest moves from from (the lowest peak of those), searching
// from start, which must be one of them, within fewestEvaluations.
func (s *search) fewest(start, from []int, limit float64) []int {
	s.evals = maxEvaluations - fewestEvaluations
	return s.walk(start, from, moved(start, from), limit, true)
}

// walk is the depth-first search of exact and fewest, heaviest queue
// first, pruning a branch once it cannot beat the best: it returns the
// first, by peak then moves (movesFirst: moves then peak), of the
// placements within maxMoves and limit; start must be one of them.
func (s *search) walk(start, from []int, maxMoves int, limit float64, movesFirst bool) []int {
	const eps = 1e-12
	best := slices.Clone(start)
	bestPeak, bestMoves := s.peak(s.loadsOf(best)), moved(best, from)
	// beaten reports whether a placement of peak p (or a partial one,
	// whose peak can only grow) and m moves (which can only grow) cannot
	// come before the best in the order.
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
		return best // nothing has fewer moves, or the mean already bounds the peak
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
		// Where from has it first, so that fewer moves are found first.
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
