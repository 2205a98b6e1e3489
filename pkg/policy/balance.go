package policy

import (
	"slices"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/topology"
)

// Balancing is what balance: load plans with; zero plans as count.
type Balancing struct {
	Loads    *load.Loads // the latest sample; nil or not Ready: none yet
	MaxMoves int         // bounds a proposal's moves; 0 proposes nothing
	// MinGain (a fraction) and MinDrop (CPU-s/s, at least
	// config.MinLoadMinDrop) are the least a proposal must lower the
	// peak by; below MinPeak nothing is proposed.
	MinGain, MinDrop, MinPeak float64
}

// Thresholds of "nothing real to gain": moves cost cache and order and
// loads are estimates. An IRQ under idleQueue never moves, a drop must
// exceed noiseZ standard errors, and within nearBest of the best peak
// the fewest moves win. maxEvaluations bounds one search's candidates;
// the fewest-moves search gets fewestEvaluations more.
const (
	idleQueue    = 0.001
	MinIntervals = 5 // load intervals a proposal needs to know the noise
	noiseZ       = 3
	nearBest     = 0.05

	maxEvaluations    = 2_000_000
	fewestEvaluations = 100_000
)

// BalanceView is the balance key of Doc; loads in CPU-seconds per second.
type BalanceView struct {
	Ready          bool      `json:"ready"` // loads were known; else nothing below is set
	TimeAccounting bool      `json:"time_accounting"`
	CPUs           []CPULoad `json:"cpus"` // the allowed CPUs' loads as planned
	Peak           float64   `json:"peak"`
	Mean           float64   `json:"mean"`
	// Queues counts the queues placed by load; Reset those put back to
	// count's placement as their held one no longer fit.
	Queues int `json:"queues"`
	Reset  int `json:"reset"`
	// Proposal is a placement with a lower peak worth moving to, else
	// nil and Still says why.
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

// CPULoad is a CPU's interrupt load: Fixed cannot move, Load adds queues.
type CPULoad struct {
	CPU   int     `json:"cpu"`
	Fixed float64 `json:"fixed"`
	Load  float64 `json:"load"`
}

// unit is one balanced queue: the IRQs of one queue index of a device.
type unit struct {
	dev, queue int          // the device's index in Plan.Devices, the queue index
	bdev       int          // the device's index in the planner's balanced devices
	irqs       []int        // indices into the device's IRQs
	class      int          // which of its device's rings count put it in (see balanceDev)
	cpu        int          // the plan's CPU: held, or count's
	near       cpumask.Mask // the CPUs its locality bound allows
	load       float64
	noise      float64 // the standard error of load: its IRQs', added
}

// balanceDev is a balanced device's classes of CPUs for the search.
type balanceDev struct {
	class map[int]int // CPU -> ring index, for the rings count used
	cpus  [][]int     // by class: the allowed CPUs of that ring
}

// loadBalanced reports whether d is placed by load (mask cpu; numa-hop, linear).
func loadBalanced(d *Device, rule *config.Rule, cfg *config.Config) bool {
	b := cfg.Balance
	if rule != nil && rule.Balance != "" {
		b = rule.Balance
	}
	return b == config.BalanceLoad && d.Mask == config.MaskCPU &&
		(d.Policy == config.PolicyNUMAHop || d.Policy == config.PolicyLinear)
}

// balanceDevice records device dev's queues as units and puts them on
// their held placement (into chosen) when it still fits. It returns
// count's CPU of each queue.
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

// heldFits returns each unit's held CPU; fits when all IRQs have one
// and agree and each class keeps count's number of units (the device's
// locality); some when any IRQ had one under its name.
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

// near returns the CPUs the locality bound lets a queue of d with
// drivers' CPU driver use: all allowed unless numa-hop with a node.
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

// shareByPackets splits each balanced device's load among its queues by
// packets where every queue is counted (busy queues poll more and
// interrupt less); the total stays the estimate's. It sets LoadSource
// and the queue IRQs' loads.
func shareByPackets(p *Plan, units []unit, l *load.Loads) {
	byDev := map[int][]int{}
	var devs []int
	for i, u := range units {
		if _, ok := byDev[u.dev]; !ok {
			devs = append(devs, u.dev)
		}
		byDev[u.dev] = append(byDev[u.dev], i)
	}
	for _, dev := range devs {
		d := &p.Devices[dev]
		d.LoadSource = load.SourceInterrupts
		mine := byDev[dev]
		rates := make([]float64, len(mine))
		noises := make([]float64, len(mine))
		var total, totalNoise, sum float64
		source := ""
		ok := true
		for j, i := range mine {
			u := &units[i]
			total += u.load
			totalNoise += u.noise
			counted := false
			for _, id := range unitQueueIDs(d, u) {
				for _, iface := range d.Interfaces {
					if q, found := l.Queue(iface, id); found && q.Ready {
						rates[j] += q.Rate
						noises[j] += q.Noise
						source, counted = q.Source, true
					}
				}
			}
			ok = ok && counted
			sum += rates[j]
		}
		if !ok || sum <= 0 {
			continue
		}
		d.LoadSource = source
		for j, i := range mine {
			u := &units[i]
			share := rates[j] / sum
			u.load = total * share
			u.noise = totalNoise*share + total*noises[j]/sum
			spreadOver(d, u)
		}
	}
}

// spreadOver shares u's load among its IRQs as the estimate did.
func spreadOver(d *Device, u *unit) {
	var est float64
	for _, k := range u.irqs {
		est += d.IRQs[k].Load
	}
	for _, k := range u.irqs {
		share := 1 / float64(len(u.irqs))
		if est > 0 {
			share = d.IRQs[k].Load / est
		}
		d.IRQs[k].Load = u.load * share
	}
}

// unitQueueIDs are the queue ids netlink links to u's IRQs, else u.queue.
func unitQueueIDs(d *Device, u *unit) []int {
	var ids []int
	for _, k := range u.irqs {
		for _, id := range d.IRQs[k].QueueIDs {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return []int{u.queue}
	}
	return ids
}
