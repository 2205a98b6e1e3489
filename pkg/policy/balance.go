package policy

import (
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/load"
)

// Balancing is what balance: load plans with. The zero value plans
// every device as count would, with no loads shown. (Where load
// balancing put queues before is Memory.Held: a device's queues stay
// there while the placement still fits the CPUs count gives it now.)
type Balancing struct {
	// Loads is the latest sample; nil or not Ready: no loads yet.
	Loads *load.Loads
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

// BalanceView is load balancing's part of a plan; its JSON form is the
// balance key of Doc, loads in CPU-seconds per second (0..1 of a CPU).
type BalanceView struct {
	// Ready says that loads were known; without them the balanced
	// devices keep their held (or count) placement and nothing else
	// here is set.
	Ready bool `json:"ready"`
	// TimeAccounting is load.Loads.TimeAccounting: measured time, or
	// rates times an assumed cost.
	TimeAccounting bool `json:"time_accounting"`
	// CPUs is the load of every allowed CPU as the plan places queues,
	// ascending by CPU.
	CPUs []CPULoad `json:"cpus"`
	// Peak and Mean are the busiest CPU's load and the mean over the
	// allowed CPUs, as planned.
	Peak float64 `json:"peak"`
	Mean float64 `json:"mean"`
	// Queues counts the queues placed by load; Reset those of them put
	// back to count's placement because their held one no longer fit.
	Queues int `json:"queues"`
	Reset  int `json:"reset"`
	// Proposal is a placement with a lower peak, nil when none is worth
	// moving to; Still then says why.
	Proposal *Proposal `json:"proposal"`
	Still    Still     `json:"still,omitempty"`
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
// chosen is count's placement, changed in place. It returns count's CPU
// of each queue.
func (pl *planner) balanceDevice(dev int, d *Device, queues []int, chosen map[int]cpumask.Mask) map[int]int {
	d.Balance = config.BalanceLoad
	rings := [][]int{d.Order}
	if d.Policy == config.PolicyNUMAHop {
		rings = pl.s.Rings(d.Node, pl.allowed)
	}
	ringOf := map[int]int{}
	for r, ring := range rings {
		for _, c := range ring {
			ringOf[c] = r
		}
	}
	bd := balanceDev{class: map[int]int{}}
	used := map[int]int{} // ring -> class
	counted := make(map[int]int, len(queues))
	units := make([]unit, 0, len(queues))
	for _, qi := range queues {
		cpu := chosen[qi].First()
		counted[qi] = cpu
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
			chosen[units[i].queue] = cpumask.New(held[i])
		}
	} else if pl.heldAny(d, units) {
		pl.reset += len(units)
	}
	pl.devs = append(pl.devs, bd)
	pl.units = append(pl.units, units...)
	return counted
}

// heldFits returns the held CPU of each unit when every unit has one,
// all its IRQs agree on it, and the units of each class number what
// count gives the class: then the held placement keeps the device's
// locality.
func (pl *planner) heldFits(d *Device, units []unit, bd balanceDev) ([]int, bool) {
	if len(pl.held) == 0 {
		return nil, false
	}
	cpus := make([]int, len(units))
	quota := map[int]int{}
	for i, u := range units {
		quota[u.class]++
		cpu := -1
		for _, k := range u.irqs {
			q := d.IRQs[k]
			h, ok := pl.held[q.Number]
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
			if h, ok := pl.held[d.IRQs[k].Number]; ok && h.Name == d.IRQs[k].Name {
				return true
			}
		}
	}
	return false
}
