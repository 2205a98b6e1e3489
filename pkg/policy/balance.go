package policy

import (
	"cmp"
	"math"
	"slices"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/load"
)

// Balancing is what balance: load plans with. The zero value plans
// every device as count would, with no loads shown.
type Balancing struct {
	// Loads is the latest sample; nil or not Ready: no loads yet.
	Loads *load.Loads
	// Held is where load balancing put queues before (Plan.Held of the
	// plan in force); a device's queues stay there while the placement
	// still fits the CPUs count balancing gives the device now.
	Held Held
	// MaxMoves bounds the queue moves of Plan.Balance.Proposal; 0
	// proposes nothing.
	MaxMoves int
	// MinGain is the fraction by which a proposal must lower the
	// busiest CPU's load.
	MinGain float64
	// MinDrop is the least a proposal must lower the busiest CPU's load
	// by, in CPU-seconds per second, however large the fraction; below
	// config.MinLoadMinDrop (also when 0) that holds.
	MinDrop float64
	// MinPeak is the busiest CPU's load below which nothing is
	// proposed: a quiet machine, none of whose CPUs is short of time.
	MinPeak float64
}

// Held is a placement load balancing chose: the CPU of each queue IRQ
// by IRQ number. It holds while the IRQ keeps its name.
type Held map[int]HeldIRQ

// HeldIRQ is one IRQ of a Held placement.
type HeldIRQ struct {
	Name string
	CPU  int
}

// Thresholds of "nothing real to gain". Every move costs the queue's
// cache and can reorder its packets, and the loads are estimates:
// softirq time sampled by the tick, shared between a CPU's queues by
// their interrupts. So:
//   - an IRQ below idleQueue (0.1% of a CPU) is never moved;
//   - a machine whose busiest CPU is below Balancing.MinPeak gets no
//     proposal, however its loads are spread;
//   - a proposal must lower the peak by MinDrop (never less than
//     config.MinLoadMinDrop), by MinGain of it, and by more than
//     noiseZ (3) standard errors of that drop (search.drop), so that
//     the estimate's own noise moves nothing;
//   - the loads need MinIntervals intervals before their noise is
//     known, and until then nothing is proposed;
//   - of the placements within nearBest (5%) of the best peak found,
//     the one with the fewest moves is proposed: one that is 1% lower
//     is not worth three more queues moved.
const (
	idleQueue = 0.001
	// MinIntervals is how many load intervals a proposal needs.
	MinIntervals = 5
	noiseZ       = 3
	nearBest     = 0.05
)

// maxEvaluations bounds the candidate moves one search looks at, so a
// machine with thousands of queues plans in bounded time; the search
// for the fewest moves near the best gets fewestEvaluations more.
const (
	maxEvaluations    = 2_000_000
	fewestEvaluations = 100_000
)

// BalanceView is load balancing's part of a plan.
type BalanceView struct {
	// Ready says that loads were known; without them the balanced
	// devices keep their held (or count) placement and nothing else
	// here is set.
	Ready bool
	// TimeAccounting is load.Loads.TimeAccounting: measured time, or
	// rates times an assumed cost.
	TimeAccounting bool
	// CPUs is the load of every allowed CPU as the plan places queues,
	// ascending by CPU.
	CPUs []CPULoad
	// Peak and Mean are the busiest CPU's load and the mean over the
	// allowed CPUs, as planned.
	Peak, Mean float64
	// Queues counts the queues placed by load; Reset those of them put
	// back to count's placement because their held one no longer fit.
	Queues, Reset int
	// Proposal is a placement with a lower peak, nil when none is worth
	// moving to; Still then says why.
	Proposal *Proposal
	Still    Still
}

// Still is why a plan proposes no move.
type Still string

const (
	StillNoBudget Still = "no move asked for (not a load round, or the move budget is spent)" // Balancing.MaxMoves is 0
	StillQuiet    Still = "busiest CPU under min_peak"                                        // a quiet machine
	StillWarming  Still = "too few intervals to know the loads' noise"                        // under MinIntervals
	StillNearBest Still = "placement in force within 5% of the best"                          // nearBest
	StillSmall    Still = "gain under min_gain or min_drop"
	StillNoise    Still = "gain within 3 standard errors" // noiseZ
)

// CPULoad is one allowed CPU's interrupt load (CPU-seconds per second):
// Fixed is what the plan cannot move (managed and pinned IRQs, other
// devices, time no IRQ accounts for), Load adds the balanced queues.
type CPULoad struct {
	CPU   int     `json:"cpu"`
	Fixed float64 `json:"fixed"`
	Load  float64 `json:"load"`
}

// Proposal is a better placement of the balanced queues.
type Proposal struct {
	Moves      []Move
	Peak, Mean float64
	// Gain is the fraction by which it lowers the planned peak; Noise
	// the standard error of the drop (it is more than noiseZ of them).
	Gain, Noise float64
	// Held is the placement with the moves made, for the next plan.
	Held Held
}

// Move is one queue moved: every IRQ of queue Queue of the device at
// PCI, from CPU From to CPU To.
type Move struct {
	PCI   string  `json:"pci"`
	Queue int     `json:"queue"`
	IRQs  []int   `json:"irqs"`
	From  int     `json:"from"`
	To    int     `json:"to"`
	Load  float64 `json:"load"`
}

// unit is one balanced queue: the IRQs of one queue index of a device,
// which always share a CPU.
type unit struct {
	dev, queue int   // the device's index in Plan.Devices, the queue index
	bdev       int   // the device's index in the planner's balanced devices
	irqs       []int // indices into the device's IRQs
	class      int   // which of its device's rings count put it in (see balanceDev)
	cpu        int   // the plan's CPU: held, or count's
	load       float64
	noise      float64 // the standard error of load: its IRQs', added
}

// balanceDev is what the search needs of a balanced device: which class
// each CPU it may use is in.
type balanceDev struct {
	class map[int]int // CPU -> ring index, for the rings count used
	cpus  [][]int     // by class: the allowed CPUs of that ring
}

// loadBalanced reports whether d is placed by load: its balance says
// so, and its policy spreads single-CPU queues (pinned, ignore and mask
// core place by count).
func loadBalanced(d *Device, rule *config.Rule, cfg *config.Config) bool {
	b := cfg.Balance
	if rule != nil && rule.Balance != "" {
		b = rule.Balance
	}
	return b == config.BalanceLoad && d.Mask == config.MaskCPU &&
		(d.Policy == config.PolicyNUMAHop || d.Policy == config.PolicyLinear)
}

// balanceDevice records device number dev's queues as units and, when
// the held placement of all of them still fits, puts them there:
// chosen is count's placement, changed in place. rings are the device's
// hop rings (one ring of its order for linear).
func (pl *planner) balanceDevice(dev int, d *Device, queues []int, chosen map[int]int, rings [][]int) {
	bd := balanceDev{class: map[int]int{}}
	ringOf := map[int]int{}
	for r, ring := range rings {
		for _, c := range ring {
			ringOf[c] = r
		}
	}
	used := map[int]int{} // ring -> class
	units := make([]unit, 0, len(queues))
	for _, qi := range queues {
		cpu := chosen[qi]
		r := ringOf[cpu]
		cl, ok := used[r]
		if !ok {
			cl = len(bd.cpus)
			used[r] = cl
			bd.cpus = append(bd.cpus, rings[r])
			for _, c := range rings[r] {
				bd.class[c] = cl
			}
		}
		u := unit{dev: dev, bdev: len(pl.devs), queue: qi, class: cl, cpu: cpu}
		for i, q := range d.IRQs {
			if q.Role == RoleQueue && q.Queue == qi && !q.handsOff() {
				u.irqs = append(u.irqs, i)
			}
		}
		units = append(units, u)
	}
	if held, ok := pl.heldFits(d, units, bd); ok {
		for i := range units {
			units[i].cpu = held[i]
			chosen[units[i].queue] = held[i]
		}
	} else if pl.heldAny(d, units) {
		pl.reset += len(units)
	}
	pl.devs = append(pl.devs, bd)
	pl.units = append(pl.units, units...)
}

// heldFits returns the held CPU of each unit when every unit has one,
// all its IRQs agree on it, and the units of each class number what
// count gives the class: then the held placement keeps the device's
// locality.
func (pl *planner) heldFits(d *Device, units []unit, bd balanceDev) ([]int, bool) {
	if len(pl.bal.Held) == 0 {
		return nil, false
	}
	cpus := make([]int, len(units))
	quota := map[int]int{}
	for i, u := range units {
		quota[u.class]++
		cpu := -1
		for _, k := range u.irqs {
			q := d.IRQs[k]
			h, ok := pl.bal.Held[q.Number]
			if !ok || h.Name != q.Name || (cpu >= 0 && h.CPU != cpu) {
				return nil, false
			}
			cpu = h.CPU
		}
		cl, ok := bd.class[cpu]
		if !ok {
			return nil, false
		}
		cpus[i] = cpu
		quota[cl]--
	}
	for _, n := range quota {
		if n != 0 {
			return nil, false
		}
	}
	return cpus, true
}

// heldAny reports whether any of the units' IRQs has a held CPU under
// its name: a placement that was dropped, not one never made.
func (pl *planner) heldAny(d *Device, units []unit) bool {
	for _, u := range units {
		for _, k := range u.irqs {
			if h, ok := pl.bal.Held[d.IRQs[k].Number]; ok && h.Name == d.IRQs[k].Name {
				return true
			}
		}
	}
	return false
}

// Held returns the plan's placement of its load-balanced queues, for
// the next plan's Balancing.Held.
func (p *Plan) Held() Held {
	h := Held{}
	for _, d := range p.Devices {
		if d.Balance != config.BalanceLoad {
			continue
		}
		for _, q := range d.IRQs {
			if q.Role == RoleQueue && !q.handsOff() && q.CPU >= 0 {
				h[q.Number] = HeldIRQ{Name: q.Name, CPU: q.CPU}
			}
		}
	}
	return h
}

// balance fills in the plan's loads and, when asked, a proposal.
func (pl *planner) balance(p *Plan) *BalanceView {
	if len(pl.units) == 0 && pl.bal.Loads == nil {
		return nil
	}
	v := &BalanceView{Queues: len(pl.units), Reset: pl.reset}
	l := pl.bal.Loads
	if l == nil || !l.Ready {
		return v
	}
	v.Ready, v.TimeAccounting = true, l.TimeAccounting

	// Every IRQ's load, for `numairqd plan` and /plan.
	for di := range p.Devices {
		for qi := range p.Devices[di].IRQs {
			q := &p.Devices[di].IRQs[qi]
			if il, ok := l.IRQ(q.Number); ok {
				q.Load = il.Load
			}
		}
	}
	inUnit := map[int]bool{}
	for i := range pl.units {
		u := &pl.units[i]
		for _, k := range u.irqs {
			q := p.Devices[u.dev].IRQs[k]
			u.load += q.Load
			if il, ok := l.IRQ(q.Number); ok {
				u.noise += il.Noise
			}
			inUnit[q.Number] = true
		}
	}
	s := newSearch(pl, l, inUnit)
	assign := make([]int, len(pl.units))
	for i, u := range pl.units {
		assign[i] = u.cpu
	}
	loads := s.loadsOf(assign)
	v.Peak, v.Mean = s.peak(loads), s.mean(loads)
	for _, c := range s.cpus {
		v.CPUs = append(v.CPUs, CPULoad{CPU: c, Fixed: s.fixed[c], Load: loads[c]})
	}
	switch {
	case pl.bal.MaxMoves <= 0:
		v.Still = StillNoBudget
	case v.Peak < pl.bal.MinPeak:
		v.Still = StillQuiet
	case l.Intervals < MinIntervals:
		v.Still = StillWarming
	}
	if v.Still != "" {
		return v
	}
	best := s.improve(slices.Clone(assign), assign, pl.bal.MaxMoves)
	if lpt := s.improve(s.lpt(assign), assign, math.MaxInt); moved(lpt, assign) <= pl.bal.MaxMoves && s.better(lpt, best, assign) {
		best = lpt
	}
	best = s.exact(best, assign, pl.bal.MaxMoves)
	// The placement in force within nearBest of the best: stay. Else
	// the fewest moves that come within nearBest, if they are worth it.
	need := max(pl.bal.MinDrop, config.MinLoadMinDrop, pl.bal.MinGain*v.Peak)
	chosen := s.fewest(best, assign, s.peak(s.loadsOf(best))*(1+nearBest))
	drop, noise := s.drop(assign, chosen)
	switch {
	case moved(chosen, assign) == 0:
		v.Still = StillNearBest
	case drop < need:
		v.Still = StillSmall
	case drop <= noiseZ*noise:
		v.Still = StillNoise
	}
	if v.Still != "" {
		return v
	}
	after := s.loadsOf(chosen)
	peak := s.peak(after)
	prop := &Proposal{Peak: peak, Mean: s.mean(after), Gain: (v.Peak - peak) / v.Peak, Noise: noise, Held: Held{}}
	for i, u := range pl.units {
		d := p.Devices[u.dev]
		for _, k := range u.irqs {
			prop.Held[d.IRQs[k].Number] = HeldIRQ{Name: d.IRQs[k].Name, CPU: chosen[i]}
		}
		if chosen[i] == u.cpu {
			continue
		}
		m := Move{PCI: d.PCI, Queue: u.queue, From: u.cpu, To: chosen[i], Load: u.load}
		for _, k := range u.irqs {
			m.IRQs = append(m.IRQs, d.IRQs[k].Number)
		}
		prop.Moves = append(prop.Moves, m)
	}
	v.Proposal = prop
	return v
}

func moved(a, from []int) int {
	n := 0
	for i := range a {
		if a[i] != from[i] {
			n++
		}
	}
	return n
}

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

// drop is how much placement to lowers the busiest CPU's load from
// placement from, and the standard error of that.
func (s *search) drop(from, to []int) (drop, noise float64) {
	before, after := s.loadsOf(from), s.loadsOf(to)
	drop = s.peak(before) - s.peak(after)
	return drop, math.Sqrt(s.variance(from, s.busiest(before)) + s.variance(to, s.busiest(after)))
}

// variance is the squared standard error of cpu's load under placement
// assign.
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
	if len(s.cpus) == 0 {
		return 0
	}
	t := 0.0
	for _, c := range s.cpus {
		t += loads[c]
	}
	return t / float64(len(s.cpus))
}

// busiest is the allowed CPU with the highest load, the lowest id of
// those tied.
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

// classOf is the class unit i's device gives cpu, -1 when it may not
// use cpu.
func (s *search) classOf(i, cpu int) int {
	if cl, ok := s.devs[s.units[i].bdev].class[cpu]; ok {
		return cl
	}
	return -1
}

// improve lowers the busiest CPU's load step by step, each step moving
// one busy queue off it or swapping one with a queue elsewhere, while
// at most maxMoves queues end up away from where from has them. Each
// step lowers the sorted load vector, so the search ends; it is bounded
// by maxEvaluations besides. Classes keep their counts: a queue moves
// within its hop ring, and a swap keeps each device's queues per ring.
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
				if c == p || n+after(u, c) > maxMoves {
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
		u := best.u
		if best.v < 0 {
			n += after(u, best.to)
			loads[p] -= s.units[u].load
			loads[best.to] += s.units[u].load
			assign[u] = best.to
			continue
		}
		v := best.v
		n += after(u, best.to) + after(v, p)
		d := s.units[u].load - s.units[v].load
		loads[p] -= d
		loads[best.to] += d
		assign[u], assign[v] = best.to, p
		class[u], class[v] = s.classOf(u, best.to), s.classOf(v, p)
	}
	return assign
}

// better reports whether placement a has a lower peak than b, or the
// same peak with fewer queues away from where from has them.
func (s *search) better(a, b, from []int) bool {
	pa, pb := s.peak(s.loadsOf(a)), s.peak(s.loadsOf(b))
	if pa < pb-1e-12 {
		return true
	}
	return pa <= pb+1e-12 && moved(a, from) < moved(b, from)
}

// exact searches placements of the busy queues depth first, heaviest
// first, from start (the best known), pruning branches whose busiest
// CPU or mean load already reaches start's peak; it keeps a placement
// with a lower peak, or the same peak and fewer moves. Within
// maxEvaluations it finds the best placement of the few busy queues of
// a lab or a typical NIC; on a larger machine it returns the best it
// reached. Each device keeps its queues per class, as count placed
// them.
func (s *search) exact(start, from []int, maxMoves int) []int {
	return s.walk(start, from, maxMoves, math.Inf(1), false)
}

// fewest returns, of the placements whose peak is at most limit, one
// with the fewest queues away from where from has them (the lowest
// peak of those), searching from start, which must be one of them, as
// exact does, with a budget of its own of fewestEvaluations: a lab's
// or a NIC's few busy queues need far fewer, and on a large machine
// start (or what the search reached) is a good placement anyway.
func (s *search) fewest(start, from []int, limit float64) []int {
	s.evals = maxEvaluations - fewestEvaluations
	return s.walk(start, from, moved(start, from), limit, true)
}

// walk is the depth-first search of exact and fewest. It orders
// placements by peak then moves, or with movesFirst by moves then
// peak, and returns the first in that order of those within maxMoves
// and limit that it reaches; start, which must be within both, is the
// first best.
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
	var busy []int
	assign := slices.Clone(from)
	loads := slices.Clone(s.fixed)
	room := make([][]int, len(s.devs))
	for d := range s.devs {
		room[d] = make([]int, len(s.devs[d].cpus))
	}
	remaining := 0.0
	for i, u := range s.units {
		if s.movable(i) {
			busy = append(busy, i)
			room[u.bdev][u.class]++
			remaining += u.load
		} else {
			loads[from[i]] += u.load
		}
	}
	slices.SortStableFunc(busy, func(a, b int) int { return cmp.Compare(s.units[b].load, s.units[a].load) })
	total := remaining
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
				if c != from[i] {
					try(c, cl)
				}
			}
		}
		assign[i] = from[i]
	}
	base := 0.0
	for _, c := range s.cpus {
		base = max(base, loads[c])
	}
	dfs(0, 0, base)
	return best
}

// lpt is the longest-processing-time placement: busy queues in
// descending load, each to the least loaded CPU its device allows in a
// class with room left (count's numbers per class), nearer classes
// first on ties; idle queues stay where from has them.
func (s *search) lpt(from []int) []int {
	assign := slices.Clone(from)
	room := make([][]int, len(s.devs))
	for d := range s.devs {
		room[d] = make([]int, len(s.devs[d].cpus))
	}
	var busy []int
	for i, u := range s.units {
		if s.movable(i) {
			room[u.bdev][u.class]++
			busy = append(busy, i)
			assign[i] = -1
		}
	}
	loads := slices.Clone(s.fixed)
	for i, c := range assign {
		if c >= 0 {
			loads[c] += s.units[i].load
		}
	}
	slices.SortStableFunc(busy, func(a, b int) int { return cmp.Compare(s.units[b].load, s.units[a].load) })
	for _, i := range busy {
		u := s.units[i]
		best, bestClass := -1, -1
		for cl, cpus := range s.devs[u.bdev].cpus {
			if room[u.bdev][cl] == 0 {
				continue
			}
			for _, c := range cpus {
				if best < 0 || loads[c] < loads[best] {
					best, bestClass = c, cl
				}
			}
		}
		assign[i] = best
		loads[best] += u.load
		room[u.bdev][bestClass]--
	}
	return assign
}
