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

// drop is how much placement to lowers from's peak, and its standard error.
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

// split parts the units for walk and lpt: the busy ones, heaviest
// first; their number per device and class; and the loads with the idle
// ones where from has them.
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
