package policy

import (
	"math"
	"slices"

	"github.com/numairqd/numairqd/pkg/config"
)

// Proposal is a better placement of the balanced queues.
type Proposal struct {
	Moves []Move  `json:"moves"`
	Peak  float64 `json:"peak"`
	Mean  float64 `json:"mean"`
	Gain  float64 `json:"gain"`  // the fraction it lowers the planned peak by
	Noise float64 `json:"noise"` // the drop's standard error
	Held  Held    `json:"-"`     // the placement with the moves made
}

// Move is one queue moved: all IRQs of queue Queue of device PCI.
type Move struct {
	PCI   string  `json:"pci"`
	Queue int     `json:"queue"`
	IRQs  []int   `json:"irqs"`
	From  int     `json:"from"`
	To    int     `json:"to"`
	Load  float64 `json:"load"`
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

	for di := range p.Devices {
		for qi := range p.Devices[di].IRQs {
			q := &p.Devices[di].IRQs[qi]
			if il, ok := l.IRQ(q.Number); ok {
				q.Load = il.Load
			}
		}
	}
	inUnit := map[int]bool{}
	assign := make([]int, len(pl.units)) // the placement in force
	for i := range pl.units {
		u := &pl.units[i]
		assign[i] = u.cpu
		for _, k := range u.irqs {
			n := p.Devices[u.dev].IRQs[k].Number
			if il, ok := l.IRQ(n); ok {
				u.load += il.Load
				u.noise += il.Noise
			}
			inUnit[n] = true
		}
	}
	shareByPackets(p, pl.units, l)
	s := newSearch(pl, l, inUnit)
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
	default:
		v.Proposal, v.Still = pl.propose(p, s, assign, v.Peak)
	}
	return v
}

// propose returns a placement worth its moves from assign, else why not.
func (pl *planner) propose(p *Plan, s *search, assign []int, peak float64) (*Proposal, Still) {
	best := s.improve(slices.Clone(assign), assign, pl.bal.MaxMoves)
	if lpt := s.improve(s.lpt(assign), assign, math.MaxInt); moved(lpt, assign) <= pl.bal.MaxMoves && s.better(lpt, best, assign) {
		best = lpt
	}
	best = s.exact(best, assign, pl.bal.MaxMoves)
	need := max(pl.bal.MinDrop, config.MinLoadMinDrop, pl.bal.MinGain*peak)
	chosen := s.fewest(best, assign, s.peak(s.loadsOf(best))*(1+nearBest))
	drop, noise := s.drop(assign, chosen)
	switch {
	case moved(chosen, assign) == 0:
		return nil, StillNearBest
	case drop < need:
		return nil, StillSmall
	case drop <= noiseZ*noise:
		return nil, StillNoise
	}
	after := s.loadsOf(chosen)
	newPeak := s.peak(after)
	prop := &Proposal{Peak: newPeak, Mean: s.mean(after), Gain: (peak - newPeak) / peak, Noise: noise, Held: Held{}}
	for i, u := range pl.units {
		d := p.Devices[u.dev]
		m := Move{PCI: d.PCI, Queue: u.queue, From: u.cpu, To: chosen[i], Load: u.load}
		for _, k := range u.irqs {
			prop.Held[d.IRQs[k].Number] = HeldIRQ{Name: d.IRQs[k].Name, CPU: chosen[i]}
			m.IRQs = append(m.IRQs, d.IRQs[k].Number)
		}
		if chosen[i] != u.cpu {
			prop.Moves = append(prop.Moves, m)
		}
	}
	return prop, ""
}
