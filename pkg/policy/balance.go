package policy

import (
	"slices"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/topology"
)

// Balancing is what balance: load plans with; the zero value plans
// every device as count would. Earlier placements are Memory.Held.
type Balancing struct {
	// Loads is the latest sample; nil or not Ready: no loads yet.
	Loads *load.Loads
	// MaxMoves bounds the queue moves of a proposal; 0 proposes nothing.
	MaxMoves int
	// MinGain (a fraction) and MinDrop (CPU-seconds per second, never
	// under config.MinLoadMinDrop) are the least a proposal must lower
	// the busiest CPU's load by; below MinPeak nothing is proposed.
	MinGain, MinDrop, MinPeak float64
}

// Thresholds of "nothing real to gain": every move costs the queue's
// cache and can reorder its packets, and loads are estimates (softirq
// time sampled by the tick, shared between a CPU's queues by their
// interrupts). An IRQ below idleQueue (0.1% of a CPU) never moves; a
// proposal's drop must exceed noiseZ standard errors (search.drop), so
// noise moves nothing; and of the placements within nearBest of the
// best peak, the fewest moves wins: 1% lower is not worth three moves.
const (
	idleQueue = 0.001
	// MinIntervals is how many load intervals a proposal needs: until
	// then the loads' noise is unknown.
	MinIntervals = 5
	noiseZ       = 3
	nearBest     = 0.05
	// maxEvaluations bounds the candidate moves one search looks at, so
	// thousands of queues plan in bounded time; the search for the
	// fewest moves near the best gets fewestEvaluations more.
	maxEvaluations    = 2_000_000
	fewestEvaluations = 100_000
)

// BalanceView is load balancing's part of a plan, the balance key of
// Doc; loads are in CPU-seconds per second (0..1 of a CPU).
type BalanceView struct {
	// Ready says loads were known; without them nothing below is set.
	Ready          bool `json:"ready"`
	TimeAccounting bool `json:"time_accounting"` // load.Loads.TimeAccounting
	// CPUs, Peak and Mean are the allowed CPUs' loads as planned.
	CPUs []CPULoad `json:"cpus"`
	Peak float64   `json:"peak"`
	Mean float64   `json:"mean"`
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
	// near are the CPUs its locality bound allows (spread.go): the
	// allowed CPUs no farther from its device's node than its drivers'
	// CPU, and that CPU's package where the plan took the exception.
	near  cpumask.Mask
	load  float64
	noise float64 // the standard error of load: its IRQs', added
}

// balanceDev is what the search needs of a balanced device: which class
// each CPU it may use is in.
type balanceDev struct {
	class map[int]int // CPU -> ring index, for the rings count used
	cpus  [][]int     // by class: the allowed CPUs of that ring
}

// loadBalanced reports whether d is placed by load: its balance says
// so and its policy spreads single CPUs (numa-hop, linear; mask cpu).
func loadBalanced(d *Device, rule *config.Rule, cfg *config.Config) bool {
	b := cfg.Balance
	if rule != nil && rule.Balance != "" {
		b = rule.Balance
	}
	return b == config.BalanceLoad && d.Mask == config.MaskCPU &&
		(d.Policy == config.PolicyNUMAHop || d.Policy == config.PolicyLinear)
}

// balanceDevice records device number dev's queues as units and, when
// their held placement still fits, puts them there: chosen is count's
// placement, changed in place. It returns count's CPU of each queue.
func (pl *planner) balanceDevice(dev int, d *Device, queues []int, chosen map[int]cpumask.Mask, driver map[int]int) map[int]int {
	d.Balance = config.BalanceLoad
	rings := [][]int{d.Order}
	if d.Policy == config.PolicyNUMAHop {
		rings = pl.s.Rings(d.Node, pl.allowed)
	}
	bd := balanceDev{class: map[int]int{}}
	counted := make(map[int]int, len(queues))
	units := make([]unit, 0, len(queues))
	for _, qi := range queues {
		cpu := chosen[qi].First()
		counted[qi] = cpu
		cl, ok := bd.class[cpu]
		if !ok {
			r := max(0, slices.IndexFunc(rings, func(r []int) bool { return slices.Contains(r, cpu) }))
			cl = len(bd.cpus)
			bd.cpus = append(bd.cpus, rings[r])
			for _, c := range rings[r] {
				bd.class[c] = cl
			}
		}
		u := unit{dev: dev, bdev: len(pl.devs), queue: qi, class: cl, cpu: cpu, near: pl.near(d, driver[qi])}
		for i, q := range d.IRQs {
			if q.Role == RoleQueue && q.Queue == qi && !q.handsOff() {
				u.irqs = append(u.irqs, i)
			}
		}
		units = append(units, u)
	}
	if held, fits, some := pl.heldFits(d, units, bd); fits {
		for i := range units {
			units[i].cpu = held[i]
			chosen[units[i].queue] = cpumask.New(held[i])
		}
	} else if some {
		pl.reset += len(units)
	}
	pl.devs = append(pl.devs, bd)
	pl.units = append(pl.units, units...)
	return counted
}

// heldFits returns the held CPU of each unit, and fits when every unit
// has one, all its IRQs agree on it, and the units of each class number
// what count gives the class: then the held placement keeps the
// device's locality. some reports whether some IRQ had a held CPU under
// its name: a placement dropped, not one never made.
func (pl *planner) heldFits(d *Device, units []unit, bd balanceDev) (cpus []int, fits, some bool) {
	cpus = make([]int, len(units))
	quota := map[int]int{}
	fits = true
	for i, u := range units {
		quota[u.class]++
		cpus[i] = -1
		for _, k := range u.irqs {
			q := d.IRQs[k]
			h, ok := pl.held[q.Number]
			ok = ok && h.Name == q.Name
			some = some || ok
			if !ok || (cpus[i] >= 0 && h.CPU != cpus[i]) {
				fits = false
			}
			cpus[i] = h.CPU
		}
		cl, ok := bd.class[cpus[i]]
		fits = fits && ok && u.near.Contains(cpus[i])
		quota[cl]--
	}
	for _, n := range quota {
		fits = fits && n == 0
	}
	return cpus, fits, some
}

// near returns the CPUs a queue of d whose drivers' CPU is driver may
// use under the locality bound: every allowed CPU for a linear device
// or one with no node.
func (pl *planner) near(d *Device, driver int) cpumask.Mask {
	if d.Policy != config.PolicyNUMAHop || d.SpreadNode == topology.NoNode {
		return pl.allowed
	}
	bound := pl.s.Distance(d.Node, pl.s.NodeOfCPU(driver))
	pkg := -1
	if c, ok := pl.s.CPU(driver); ok && pl.relaxed {
		pkg = c.Package
	}
	key := [3]int{d.Node, bound, pkg}
	if m, ok := pl.nearMasks[key]; ok {
		return m
	}
	var b cpumask.Builder
	for c := range pl.allowed.All() {
		cpu, _ := pl.s.CPU(c)
		if ok, _ := withinBound(pl.s, d.Node, bound, pkg, cpu.Node, cpu.Package); ok {
			b.Set(c)
		}
	}
	m := b.Mask()
	pl.nearMasks[key] = m
	return m
}
