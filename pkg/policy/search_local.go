package policy

import (
	"slices"
)

// improve lowers the busiest CPU's load by moving a busy queue off it or
// swapping it with one elsewhere, within its ring and bound and at most
// maxMoves from from. Each step lowers the sorted loads, so it ends.
func (s *search) improve(assign, from []int, maxMoves int) []int {
	loads := s.loadsOf(assign)
	class := make([]int, len(assign))
	for i, c := range assign {
		class[i] = s.classOf(i, c)
	}
	n := moved(assign, from)
	for s.evals < maxEvaluations {
		p := s.busiest(loads)
		type step struct {
			u, v, to int // v < 0: a move of u to CPU to
			score    float64
		}
		best := step{u: -1, score: loads[p] - 1e-9}
		after := func(i, cpu int) int { // n once unit i is on cpu
			switch {
			case assign[i] == from[i] && cpu != from[i]:
				return 1
			case assign[i] != from[i] && cpu == from[i]:
				return -1
			}
			return 0
		}
		for u := range assign {
			if assign[u] != p || !s.movable(u) {
				continue
			}
			lu := s.units[u].load
			for _, c := range s.devs[s.units[u].bdev].cpus[class[u]] {
				s.evals++
				if c == p || !s.units[u].near.Contains(c) || n+after(u, c) > maxMoves {
					continue
				}
				if sc := max(loads[p]-lu, loads[c]+lu); sc < best.score {
					best = step{u: u, v: -1, to: c, score: sc}
				}
			}
			for v := range assign {
				c := assign[v]
				s.evals++
				if c == p || !s.movable(v) || s.units[v].load >= lu {
					continue
				}
				cu, cv := s.classOf(u, c), s.classOf(v, p)
				same := s.units[u].bdev == s.units[v].bdev && cu == class[v] && cv == class[u]
				if !same && (cu != class[u] || cv != class[v]) {
					continue
				}
				if n+after(u, c)+after(v, p) > maxMoves {
					continue
				}
				lv := s.units[v].load
				if sc := max(loads[p]-lu+lv, loads[c]-lv+lu); sc < best.score {
					best = step{u: u, v: v, to: c, score: sc}
				}
			}
		}
		if best.u < 0 {
			break
		}
		u, v, d := best.u, best.v, s.units[best.u].load
		n += after(u, best.to)
		if v >= 0 {
			n += after(v, p)
			d -= s.units[v].load
			assign[v], class[v] = p, s.classOf(v, p)
		}
		loads[p] -= d
		loads[best.to] += d
		assign[u], class[u] = best.to, s.classOf(u, best.to)
	}
	return assign
}

// better reports whether a has a lower peak than b, or fewer moves.
func (s *search) better(a, b, from []int) bool {
	pa, pb := s.peak(s.loadsOf(a)), s.peak(s.loadsOf(b))
	return pa < pb-1e-12 || pa <= pb+1e-12 && moved(a, from) < moved(b, from)
}

// lpt is the longest-processing-time placement: busy queues, heaviest
// first, each to the least loaded CPU of its bound in a class with
// room; idle ones stay. It returns from when a queue finds no room.
func (s *search) lpt(from []int) []int {
	assign := slices.Clone(from)
	busy, room, loads := s.split(from)
	for _, i := range busy {
		u := s.units[i]
		best, bestClass := -1, -1
		for cl, cpus := range s.devs[u.bdev].cpus {
			if room[u.bdev][cl] == 0 {
				continue
			}
			for _, c := range cpus {
				if u.near.Contains(c) && (best < 0 || loads[c] < loads[best]) {
					best, bestClass = c, cl
				}
			}
		}
		if best < 0 {
			return slices.Clone(from)
		}
		assign[i] = best
		loads[best] += u.load
		room[u.bdev][bestClass]--
	}
	return assign
}
