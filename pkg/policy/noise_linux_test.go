package policy_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/policy"
)

// procSim is a /proc/stat and /proc/interrupts that a test drives, read
// by a real load.Sampler: each step charges every IRQ's load for the
// interval to the CPU it fires on, as softirq ticks (USER_HZ, rounded as
// the tick rounds) and interrupts in proportion to the load.
type procSim struct {
	t      testing.TB
	tree   *fakesys.Tree
	cpus   int
	irqs   []int
	total  []uint64 // per CPU, ticks
	soft   []uint64 // per CPU, ticks
	counts map[int][]uint64
	now    time.Time
	s      *load.Sampler
}

func newProcSim(t testing.TB, cpus int, irqs []int, halfLife time.Duration) *procSim {
	p := &procSim{t: t, tree: fakesys.New(t), cpus: cpus, irqs: irqs, total: make([]uint64, cpus), soft: make([]uint64, cpus),
		counts: map[int][]uint64{}, now: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	for _, q := range irqs {
		p.counts[q] = make([]uint64, cpus)
	}
	p.s = load.NewSampler(load.FS{Proc: p.tree.Proc()}, load.Config{HalfLife: halfLife})
	p.write()
	if _, err := p.s.Sample(p.now); err != nil {
		t.Fatal(err)
	}
	return p
}

// step runs dt with irq i taking loads[i] of a CPU on cpuOf[i], and
// samples.
func (p *procSim) step(dt time.Duration, loads map[int]float64, cpuOf map[int]int) *load.Loads {
	busy := make([]float64, p.cpus)
	for q, l := range loads {
		c := cpuOf[q]
		busy[c] += l
		p.counts[q][c] += uint64(math.Round(l * dt.Seconds() * 20000))
	}
	ticks := uint64(math.Round(dt.Seconds() * 100))
	for c := range p.cpus {
		p.total[c] += ticks
		p.soft[c] += min(ticks, uint64(math.Round(busy[c]*float64(ticks))))
	}
	p.now = p.now.Add(dt)
	p.write()
	l, err := p.s.Sample(p.now)
	if err != nil {
		p.t.Fatal(err)
	}
	return &l
}

func (p *procSim) write() {
	var st strings.Builder
	st.WriteString("cpu  0 0 0 0 0 0 0 0 0 0\n")
	online := make([]int, p.cpus)
	for c := range p.cpus {
		// user nice system idle iowait irq softirq steal guest guest_nice
		fmt.Fprintf(&st, "cpu%d 0 0 0 %d 0 0 %d 0 0 0\n", c, p.total[c]-p.soft[c], p.soft[c])
		online[c] = c
	}
	st.WriteString("intr 0\n")
	p.tree.WriteFile("proc/stat", st.String())
	rows := make([]fakesys.InterruptRow, len(p.irqs))
	for k, q := range p.irqs {
		rows[k] = fakesys.InterruptRow{IRQ: q, Counts: p.counts[q], Chip: "PCI-MSIX-0000:41:00.0", HWIRQ: fmt.Sprint(k, "-edge"), Name: fmt.Sprint("virtio0-q", k)}
	}
	p.tree.AddInterrupts(online, rows...)
}

// jitter draws each queue's load for one interval: mean[k] times
// 1+sigma*N(0,1), never below 0. The load is on the queue's input IRQ.
func jitter(r *rand.Rand, first int, mean []float64, sigma float64) map[int]float64 {
	m := map[int]float64{}
	for k, v := range mean {
		m[first+1+2*k] = max(0, v*(1+sigma*r.NormFloat64()))
	}
	return m
}

// irqCPUs is where each IRQ of the plan fires: its planned CPU.
func irqCPUs(p *policy.Plan) map[int]int {
	m := map[int]int{}
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			if q.CPU >= 0 {
				m[q.Number] = q.CPU
			}
		}
	}
	return m
}

// queueLoads is the load the plan gives each queue of the device at pci
// (its IRQs' loads added).
func queueLoads(t testing.TB, p *policy.Plan, pci string) []float64 {
	t.Helper()
	var out []float64
	for _, q := range device(t, p, pci).IRQs {
		if q.Role == policy.RoleQueue && !q.Managed {
			for len(out) <= q.Queue {
				out = append(out, 0)
			}
			out[q.Queue] += q.Load
		}
	}
	return out
}

// placements calls f with every placement of len(from) queues on cpus
// CPUs, and the number of queues away from where from has them.
func placements(from []int, cpus int, f func(cpuOf []int, moves int)) {
	cur := make([]int, len(from))
	var walk func(i, moves int)
	walk = func(i, moves int) {
		if i == len(from) {
			f(cur, moves)
			return
		}
		for c := range cpus {
			cur[i] = c
			m := moves
			if c != from[i] {
				m++
			}
			walk(i+1, m)
		}
	}
	walk(0, 0)
}

// fewestMoves is, by exhaustive search, the fewest queues moved from
// from that reach a peak at most limit, with fixed load per CPU.
func fewestMoves(queues, fixed []float64, from []int, cpus int, limit float64) int {
	best := math.MaxInt
	per := make([]float64, cpus)
	placements(from, cpus, func(cpuOf []int, moves int) {
		if moves >= best {
			return
		}
		copy(per, fixed)
		for k, c := range cpuOf {
			per[c] += queues[k]
		}
		if slices.Max(per) <= limit+1e-12 {
			best = moves
		}
	})
	return best
}

// noiseCfg is the e2e balance config: 2 s samples, 10 s half-life.
const noiseCfg = "balance: load\nload_balance:\n  interval: 2s\n  half_life: 10s\n"

// TestBalanceNoiseEven: 8 equal queues on the MANA-like guest's 4 CPUs
// (count: two a CPU) with each interval's load jittered by 50% around
// the mean, 300 samples: the estimate often shows a placement whose peak
// is lower by more than min_gain and min_drop, and the planner never
// proposes it, often because the gain is within 3 standard errors.
func TestBalanceNoiseEven(t *testing.T) {
	f := newFixture(t, twoByTwo())
	f.virtio("0000:41:00.0", 0, 8, 24, 1)
	b := readBack(t, f)
	cfg := parseConfig(t, noiseCfg)
	lb := cfg.LoadBalance
	r := rand.New(rand.NewPCG(25, 12))
	count := b.plan(cfg, policy.Balancing{})
	from := queueCPU(t, count, "0000:41:00.0")
	mean := []float64{0.15, 0.15, 0.15, 0.15, 0.15, 0.15, 0.15, 0.15}
	sim := newProcSim(t, 4, irqNumbers(b), lb.HalfLife)
	apparent, why := 0, map[policy.Still]int{}
	for i := range 300 {
		l := sim.step(lb.Interval, jitter(r, 24, mean, 0.5), irqCPUs(count))
		p := b.plan(cfg, policy.Balancing{Loads: l, MaxMoves: lb.MovesPerMinute, MinGain: lb.MinGain, MinDrop: lb.MinDrop, MinPeak: lb.MinPeak})
		v := p.Balance
		if v.Proposal != nil {
			t.Fatalf("sample %d: proposal %+v (peak %.3f -> %.3f) for loads jittered around an even placement",
				i, v.Proposal.Moves, v.Peak, v.Proposal.Peak)
		}
		if opt := bestPeak(queueLoads(t, p, "0000:41:00.0"), make([]float64, 4), 4); v.Peak-opt >= max(lb.MinDrop, lb.MinGain*v.Peak) {
			apparent++
			why[v.Still]++
		}
		if got := queueCPU(t, p, "0000:41:00.0"); !slices.Equal(got, from) {
			t.Fatalf("sample %d: queues on %v, want count's %v", i, got, from)
		}
	}
	// Without the noise rule at least those it names would have moved
	// queues. (Others: the fewest moves within 5% of the best gain less
	// than the best would.)
	if why[policy.StillNoise] < 10 {
		t.Errorf("%d of 300 samples showed a gain above min_gain and min_drop, kept still because %v: the noise does not test the noise rule",
			apparent, why)
	}
	t.Logf("%d of 300 samples showed a gain above min_gain and min_drop, kept still because %v", apparent, why)
}

// TestBalanceNoiseSkewed: two elephant queues that count stacks on CPU
// 0, loads jittered by 20% an interval, 320 samples, each proposal
// adopted. Nothing is proposed before the spread is known; every
// proposal has the fewest moves of the placements within 5% of the best
// peak (exhaustive search on the loads it planned with) and lowers the
// peak of the true mean loads by at least min_drop (a real gain, not
// noise); a few steps part the elephants and reach a placement within
// 15% of the true best, and it then holds. (One more light queue moved
// would often gain the last 12%, but that is within one interval's
// noise of the two busiest CPUs, 20% of each elephant.)
func TestBalanceNoiseSkewed(t *testing.T) {
	for seed := range uint64(10) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { noiseSkewed(t, seed) })
	}
}

func noiseSkewed(t *testing.T, seed uint64) {
	f := newFixture(t, twoByTwo())
	f.virtio("0000:41:00.0", 0, 8, 24, 1)
	b := readBack(t, f)
	cfg := parseConfig(t, noiseCfg)
	lb := cfg.LoadBalance
	r := rand.New(rand.NewPCG(25, seed))
	mean := []float64{0.4, 0.05, 0.05, 0.05, 0.4, 0.05, 0.05, 0.05}
	truePeak := func(cpuOf []int) float64 {
		per := make([]float64, 4)
		for k, c := range cpuOf {
			per[c] += mean[k]
		}
		return slices.Max(per)
	}
	sim := newProcSim(t, 4, irqNumbers(b), lb.HalfLife)
	bal := policy.Balancing{MaxMoves: 100, MinGain: lb.MinGain, MinDrop: lb.MinDrop, MinPeak: lb.MinPeak}
	inForce := b.plan(cfg, policy.Balancing{})
	var held policy.Held
	steps, last := 0, 0
	for i := range 320 {
		l := sim.step(lb.Interval, jitter(r, 24, mean, 0.2), irqCPUs(inForce))
		bal.Loads = l
		p := b.Plan(cfg, policy.Memory{Held: held}, bal)
		v := p.Balance
		if v.Proposal == nil {
			inForce = p
			continue
		}
		if l.Intervals < policy.MinIntervals {
			t.Fatalf("sample %d: a proposal after %d intervals, before the spread is known", i, l.Intervals)
		}
		queues := queueLoads(t, p, "0000:41:00.0")
		from := queueCPU(t, p, "0000:41:00.0")
		opt := bestPeak(queues, make([]float64, 4), 4)
		want := fewestMoves(queues, make([]float64, 4), from, 4, opt*1.05)
		if got := len(v.Proposal.Moves); got != want || v.Proposal.Peak > opt*1.05+1e-12 {
			t.Errorf("sample %d: proposal of %d moves to peak %.3f; want %d moves (the fewest within 5%% of the best %.3f)",
				i, got, v.Proposal.Peak, want, opt)
		}
		held = v.Proposal.Held
		inForce = b.Plan(cfg, policy.Memory{Held: held}, bal)
		to := queueCPU(t, inForce, "0000:41:00.0")
		if before, after := truePeak(from), truePeak(to); before-after < lb.MinDrop {
			t.Errorf("sample %d: moves %+v lower the true peak from %.3f only to %.3f", i, v.Proposal.Moves, before, after)
		}
		steps, last = steps+1, i
		t.Logf("sample %d: %d moves, estimated peak %.3f -> %.3f (best %.3f), true %.3f -> %.3f",
			i, len(v.Proposal.Moves), v.Peak, v.Proposal.Peak, opt, truePeak(from), truePeak(to))
	}
	got := queueCPU(t, inForce, "0000:41:00.0")
	if steps == 0 || steps > 3 {
		t.Errorf("%d steps, want 1 to 3", steps)
	}
	if p := truePeak(got); p > 0.4*1.15+1e-9 || got[0] == got[4] {
		t.Errorf("queues end on %v, true peak %.3f: elephants together or more than 15%% above the best 0.4", got, p)
	}
	if last > 160 {
		t.Errorf("a step at sample %d: still moving in the second half", last)
	}
}

// irqNumbers is every IRQ of the inventory, ascending.
func irqNumbers(b balanced) []int {
	var out []int
	for _, q := range b.Inventory.IRQs {
		out = append(out, q.Number)
	}
	slices.Sort(out)
	return out
}
