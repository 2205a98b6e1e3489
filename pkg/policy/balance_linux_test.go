package policy_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/policy"
)

// twoByTwo is the MANA-like lab guest: 4 CPUs on 2 nodes of 2, distance
// 20 between them.
func twoByTwo() fakesys.Machine {
	return fakesys.Machine{Online: "0-3", Nodes: []fakesys.Node{
		{ID: 0, CPUs: "0-1", Distance: []int{10, 20}},
		{ID: 1, CPUs: "2-3", Distance: []int{20, 10}},
	}}
}

// loads builds a Ready sample: irq gives IRQ loads (others 0), fired
// where each IRQ fires (default: the first CPU of its affinity), and
// unattributed per CPU.
func (b balanced) loads(irq map[int]float64, fired map[int]int, unattributed map[int]float64) *load.Loads {
	l := &load.Loads{Ready: true, TimeAccounting: true, Intervals: policy.MinIntervals}
	for c := range b.Snapshot.Online().All() {
		l.CPUs = append(l.CPUs, load.CPULoad{CPU: c, Unattributed: unattributed[c], Ready: true})
	}
	for _, q := range b.Inventory.IRQs {
		cpu, ok := fired[q.Number]
		if !ok {
			cpu = q.Affinity.First()
		}
		l.IRQs = append(l.IRQs, load.IRQLoad{IRQ: q.Number, Load: irq[q.Number], CPU: cpu, Ready: true})
	}
	slices.SortFunc(l.IRQs, func(a, b load.IRQLoad) int { return a.IRQ - b.IRQ })
	return l
}

func (b balanced) plan(cfg *config.Config, bal policy.Balancing) *policy.Plan {
	return b.Plan(cfg, policy.Memory{}, bal)
}

// virtioLoads gives virtio queue k (input first+1+2k, output first+2+2k)
// load per[k], all on the input IRQ.
func virtioLoads(first int, per ...float64) map[int]float64 {
	m := map[int]float64{}
	for k, v := range per {
		m[first+1+2*k] = v
	}
	return m
}

// queueCPU is the planned CPU of each queue of the device at pci.
func queueCPU(t testing.TB, p *policy.Plan, pci string) []int {
	t.Helper()
	var out []int
	for _, q := range device(t, p, pci).IRQs {
		if q.Role == policy.RoleQueue && !q.Managed && !strings.Contains(q.Name, "-output.") {
			for len(out) <= q.Queue {
				out = append(out, -1)
			}
			out[q.Queue] = q.CPU
		}
	}
	return out
}

var loadCfg = "balance: load\n"

// adopt plans again holding p's proposal, as the daemon does once the
// proposal has held for its samples.
func adopt(t testing.TB, b balanced, cfg *config.Config, l *load.Loads, p *policy.Plan) *policy.Plan {
	t.Helper()
	if p.Balance == nil || p.Balance.Proposal == nil {
		t.Fatal("no proposal to adopt")
	}
	return b.Plan(cfg, policy.Memory{Held: p.Balance.Proposal.Held}, policy.Balancing{Loads: l})
}

// TestBalanceEvenKeepsCount: with even loads nothing moves, and queue i
// stays on count's CPU.
func TestBalanceEvenKeepsCount(t *testing.T) {
	f := newFixture(t, twoByTwo())
	f.virtio("0000:41:00.0", 0, 8, 24, 1)
	b := readBack(t, f)
	cfg := parseConfig(t, loadCfg)
	count := b.plan(config.Default(), policy.Balancing{})
	l := b.loads(virtioLoads(24, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05), nil, nil)
	p := b.plan(cfg, policy.Balancing{Loads: l, MaxMoves: 100, MinGain: 0.1})
	if got, want := queueCPU(t, p, "0000:41:00.0"), queueCPU(t, count, "0000:41:00.0"); !slices.Equal(got, want) {
		t.Errorf("queues on %v, want count's %v", got, want)
	}
	v := p.Balance
	if v == nil || !v.Ready || v.Proposal != nil || v.Queues != 8 {
		t.Fatalf("Balance %+v, want ready, 8 queues, no proposal", v)
	}
	if math.Abs(v.Peak-0.1) > 1e-9 || math.Abs(v.Mean-0.1) > 1e-9 {
		t.Errorf("peak %v mean %v, want 0.1 and 0.1", v.Peak, v.Mean)
	}
	if d := device(t, p, "0000:41:00.0"); d.Balance != config.BalanceLoad || d.Policy != config.PolicyLinear {
		t.Errorf("device balance %s policy %s, want load, linear", d.Balance, d.Policy)
	}
}

// TestBalanceElephants: two hot queues that count put on one CPU (8
// queues, 4 CPUs) are split, the light ones fill in, and adopting the
// proposal leaves nothing more to do.
func TestBalanceElephants(t *testing.T) {
	f := newFixture(t, twoByTwo())
	f.virtio("0000:41:00.0", 0, 8, 24, 1)
	b := readBack(t, f)
	cfg := parseConfig(t, loadCfg)
	per := []float64{0.4, 0.05, 0.05, 0.05, 0.4, 0.05, 0.05, 0.05}
	l := b.loads(virtioLoads(24, per...), nil, nil)
	p := b.plan(cfg, policy.Balancing{Loads: l, MaxMoves: 100, MinGain: 0.1})
	v := p.Balance
	if v.Peak != 0.8 {
		t.Fatalf("count's peak %v, want 0.8 (queues 0 and 4 on CPU 2)", v.Peak)
	}
	pr := v.Proposal
	if pr == nil {
		t.Fatal("no proposal")
	}
	opt := bestPeak(per, nil, 4)
	if pr.Peak > opt*1.0001 {
		t.Errorf("proposal peak %v, best whole-queue peak %v", pr.Peak, opt)
	}
	if len(pr.Moves) > 3 {
		t.Errorf("%d moves, want at most 3: %+v", len(pr.Moves), pr.Moves)
	}
	after := adopt(t, b, cfg, l, p)
	if after.Balance.Proposal != nil || math.Abs(after.Balance.Peak-pr.Peak) > 1e-12 {
		t.Errorf("after adopting: peak %v proposal %+v, want %v and none", after.Balance.Peak, after.Balance.Proposal, pr.Peak)
	}
	for _, m := range pr.Moves {
		if got := queueCPU(t, after, "0000:41:00.0")[m.Queue]; got != m.To {
			t.Errorf("queue %d on CPU %d after adopting, want %d", m.Queue, got, m.To)
		}
	}
	// The held placement is kept by every later plan with the same
	// loads, proposal or not.
	again := b.Plan(cfg, policy.Memory{Held: after.Held()}, policy.Balancing{Loads: l, MaxMoves: 100, MinGain: 0.1})
	if again.Balance.Still != policy.StillNearBest {
		t.Errorf("a plan holding the adopted placement is still because %q, want %q", again.Balance.Still, policy.StillNearBest)
	}
	da, dg := after.Doc(), again.Doc()
	da.Balance.Still, dg.Balance.Still = "", "" // adopt plans with no budget
	if !reflect.DeepEqual(dg, da) {
		t.Error("a plan holding the adopted placement differs from it")
	}
}

// TestBalanceHotManaged: a managed NVMe queue that count cannot see
// makes its CPU the busiest; the virtio queue sharing it moves to the
// other CPU of the same hop, so the mean distance stays count's.
func TestBalanceHotManaged(t *testing.T) {
	f := newFixture(t, fourNodes())
	f.tree.AddVirtioNet(fakesys.VirtioNet{BDF: "0000:41:00.0", Index: 0, Interface: "eth0", Pairs: 6, FirstIRQ: 24, NUMANode: 2})
	specs := []fakesys.IRQSpec{{Number: 40, Name: "nvme0q0", Affinity: "2-3"}}
	for q := 1; q <= 8; q++ {
		specs = append(specs, fakesys.IRQSpec{Number: 40 + q, Name: fmt.Sprintf("nvme0q%d", q), Affinity: fmt.Sprint(q - 1), Managed: true})
	}
	f.tree.AddMSIXDevice(fakesys.PCIDevice{BDF: "0000:21:00.0", NUMANode: 1, Driver: "nvme", Class: "0x010802"}, specs...)
	b := readBack(t, f)
	cfg := parseConfig(t, loadCfg)
	irq := virtioLoads(24, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1)
	irq[45] = 0.5 // nvme0q5, managed, on CPU 4
	l := b.loads(irq, nil, nil)
	p := b.plan(cfg, policy.Balancing{Loads: l, MaxMoves: 100, MinGain: 0.1})
	if got := queueCPU(t, p, "0000:41:00.0"); !slices.Equal(got, []int{4, 5, 6, 7, 0, 1}) {
		t.Fatalf("count's queues on %v, want 4 5 6 7 0 1", got)
	}
	pr := p.Balance.Proposal
	if pr == nil || len(pr.Moves) != 1 || pr.Moves[0].Queue != 0 || pr.Moves[0].From != 4 || pr.Moves[0].To != 5 {
		t.Fatalf("proposal %+v, want queue 0 from CPU 4 to 5", pr)
	}
	if math.Abs(pr.Peak-0.5) > 1e-9 || math.Abs(p.Balance.Peak-0.6) > 1e-9 {
		t.Errorf("peak %v -> %v, want 0.6 -> 0.5", p.Balance.Peak, pr.Peak)
	}
	after := adopt(t, b, cfg, l, p)
	if got, want := meanDistance(t, after, "0000:41:00.0"), meanDistance(t, p, "0000:41:00.0"); got != want {
		t.Errorf("mean distance %v after the move, count's %v", got, want)
	}
	q := device(t, after, "0000:41:00.0").IRQs[1]
	if q.Reason != "numa-hop, balance load: queue 0 -> CPU 5, count's CPU 4, hop 0, distance 10 from node 2" || q.Load != 0.1 {
		t.Errorf("IRQ 25: load %v, reason %q", q.Load, q.Reason)
	}
}

// TestBalanceTwoDevicesShareNode: a hot device may use the CPUs of its
// hop that count gave a quiet one, by swapping with the quiet queue.
func TestBalanceTwoDevicesShareNode(t *testing.T) {
	m := fakesys.Machine{Online: "0-7", Nodes: []fakesys.Node{
		{ID: 0, CPUs: "0-3", Distance: []int{10, 20}},
		{ID: 1, CPUs: "4-7", Distance: []int{20, 10}},
	}}
	f := newFixture(t, m)
	f.virtio("0000:41:00.0", 0, 2, 24, 0)
	f.virtio("0000:42:00.0", 1, 2, 64, 0)
	b := readBack(t, f)
	cfg := parseConfig(t, loadCfg)
	irq := virtioLoads(24, 0.6, 0.6)
	for k, v := range virtioLoads(64, 0.05, 0.05) {
		irq[k] = v
	}
	l := b.loads(irq, nil, map[int]float64{1: 0.4})
	p := b.plan(cfg, policy.Balancing{Loads: l, MaxMoves: 100, MinGain: 0.1})
	if a, c := queueCPU(t, p, "0000:41:00.0"), queueCPU(t, p, "0000:42:00.0"); !slices.Equal(a, []int{0, 1}) || !slices.Equal(c, []int{2, 3}) {
		t.Fatalf("count's queues on %v and %v, want 0 1 and 2 3", a, c)
	}
	pr := p.Balance.Proposal
	if pr == nil || math.Abs(pr.Peak-0.6) > 1e-9 {
		t.Fatalf("proposal %+v, want peak 0.6", pr)
	}
	after := adopt(t, b, cfg, l, p)
	for _, pci := range []string{"0000:41:00.0", "0000:42:00.0"} {
		for _, c := range queueCPU(t, after, pci) {
			if c > 3 {
				t.Errorf("%s has a queue on CPU %d, off node 0", pci, c)
			}
		}
	}
	if slices.Contains(queueCPU(t, after, "0000:41:00.0"), 1) {
		t.Error("a hot queue still shares CPU 1 with its 0.4 of fixed load")
	}
}

// TestBalanceIdleMovesNothing: no load, or a quiet machine (busiest CPU
// under min_peak) however its load is spread, gets no proposal and
// keeps count's placement.
func TestBalanceIdleMovesNothing(t *testing.T) {
	f := newFixture(t, twoByTwo())
	f.virtio("0000:41:00.0", 0, 8, 24, 1)
	b := readBack(t, f)
	cfg := parseConfig(t, loadCfg)
	for _, tc := range []struct {
		name string
		per  []float64
	}{
		{"queue 0 alone busy, far below any CPU's worth of noise", []float64{0.004}},
		// Count stacks queues 0 and 4 on CPU 0 (9% of it) and leaves
		// the others idle: halving the peak would clear min_gain and
		// min_drop, but no CPU is short of time.
		{"quiet, all on one CPU", []float64{0.045, 0, 0, 0, 0.045}},
	} {
		l := b.loads(virtioLoads(24, tc.per...), nil, nil)
		p := b.plan(cfg, policy.Balancing{Loads: l, MaxMoves: 100, MinGain: 0.1, MinDrop: 0.03, MinPeak: 0.1})
		if p.Balance.Proposal != nil || p.Balance.Still != policy.StillQuiet {
			t.Errorf("%s: proposal %+v, still %q; want none, %q", tc.name, p.Balance.Proposal, p.Balance.Still, policy.StillQuiet)
		}
	}
}

// TestBalanceBudget: a proposal moves no more queues than MaxMoves, and
// still lowers the peak.
func TestBalanceBudget(t *testing.T) {
	f := newFixture(t, twoByTwo())
	f.virtio("0000:41:00.0", 0, 8, 24, 1)
	b := readBack(t, f)
	cfg := parseConfig(t, loadCfg)
	// Count: CPU 0 0.6, CPU 1 0.4, CPUs 2 and 3 0.04. The best takes
	// three moves (peak 0.3), one move reaches 0.4.
	l := b.loads(virtioLoads(24, 0.3, 0.2, 0.02, 0.02, 0.3, 0.2, 0.02, 0.02), nil, nil)
	p := b.plan(cfg, policy.Balancing{Loads: l, MaxMoves: 1, MinGain: 0.1})
	pr := p.Balance.Proposal
	if pr == nil || len(pr.Moves) != 1 || math.Abs(pr.Peak-0.4) > 1e-9 {
		t.Fatalf("proposal %+v with budget 1 from peak %v, want one move to peak 0.4", pr, p.Balance.Peak)
	}
	p = b.plan(cfg, policy.Balancing{Loads: l, MaxMoves: 6, MinGain: 0.1})
	if pr := p.Balance.Proposal; pr == nil || len(pr.Moves) != 3 || math.Abs(pr.Peak-0.3) > 1e-9 {
		t.Fatalf("proposal %+v with budget 6, want three moves to peak 0.3", pr)
	}
}

// TestBalanceHeldReset: a held placement that no longer fits (its CPU
// was banned) is dropped for count's, and counted.
func TestBalanceHeldReset(t *testing.T) {
	f := newFixture(t, twoByTwo())
	f.virtio("0000:41:00.0", 0, 8, 24, 1)
	b := readBack(t, f)
	cfg := parseConfig(t, loadCfg)
	l := b.loads(virtioLoads(24, 0.4, 0.05, 0.05, 0.05, 0.4, 0.05, 0.05, 0.05), nil, nil)
	p := b.plan(cfg, policy.Balancing{Loads: l, MaxMoves: 100, MinGain: 0.1})
	held := p.Balance.Proposal.Held
	banned := parseConfig(t, loadCfg+"banned_cpus: \"3\"\n")
	after := b.Plan(banned, policy.Memory{Held: held}, policy.Balancing{Loads: l})
	count := b.plan(parseConfig(t, "banned_cpus: \"3\"\n"), policy.Balancing{})
	if got, want := queueCPU(t, after, "0000:41:00.0"), queueCPU(t, count, "0000:41:00.0"); !slices.Equal(got, want) {
		t.Errorf("queues on %v after CPU 3 was banned, want count's %v", got, want)
	}
	if after.Balance.Reset != 8 {
		t.Errorf("Reset %d, want 8", after.Balance.Reset)
	}
}

func meanDistance(t testing.TB, p *policy.Plan, pci string) float64 {
	t.Helper()
	sum, n := 0, 0
	for _, q := range device(t, p, pci).IRQs {
		if q.Role == policy.RoleQueue && q.Distance >= 0 {
			sum += q.Distance
			n++
		}
	}
	return float64(sum) / float64(n)
}

// bestPeak is the lowest peak over every placement of whole queues on
// cpus CPUs, with fixed load per CPU: the offline bound, by exhaustive
// search.
func bestPeak(queues, fixed []float64, cpus int) float64 {
	loads := make([]float64, cpus)
	copy(loads, fixed)
	best := math.Inf(1)
	var walk func(i int)
	walk = func(i int) {
		if i == len(queues) {
			best = min(best, slices.Max(loads))
			return
		}
		for c := range cpus {
			loads[c] += queues[i]
			if slices.Max(loads) < best {
				walk(i + 1)
			}
			loads[c] -= queues[i]
		}
	}
	walk(0)
	return best
}

// TestBalanceNearBest: on random single-device linear cases (queues
// outnumbering 4 CPUs, random fixed load), load balancing proposes the
// fewest moves that reach within 5% of the best whole-queue placement
// (both by exhaustive search), or nothing where that gains less than
// the half percent of a CPU that is too little to move for.
func TestBalanceNearBest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	f := newFixture(t, twoByTwo())
	f.virtio("0000:41:00.0", 0, 8, 24, 1)
	b := readBack(t, f)
	cfg := parseConfig(t, loadCfg)
	count := queueCPU(t, b.plan(cfg, policy.Balancing{}), "0000:41:00.0")
	proposals := 0
	for iter := range 200 {
		per := make([]float64, 8)
		for k := range per {
			switch r.IntN(3) {
			case 0:
				per[k] = 0
			case 1:
				per[k] = 0.02 + 0.05*r.Float64()
			default:
				per[k] = 0.1 + 0.5*r.Float64()
			}
		}
		fixed := make([]float64, 4)
		un := map[int]float64{}
		for c := range fixed {
			if r.IntN(3) == 0 {
				fixed[c] = 0.3 * r.Float64()
				un[c] = fixed[c]
			}
		}
		l := b.loads(virtioLoads(24, per...), nil, un)
		p := b.plan(cfg, policy.Balancing{Loads: l, MaxMoves: 100, MinGain: 0})
		v := p.Balance
		opt := bestPeak(per, fixed, 4)
		pr := v.Proposal
		if pr == nil {
			if v.Peak-opt >= config.MinLoadMinDrop && v.Peak > opt*1.05+1e-12 {
				t.Errorf("iter %d: queues %.3f fixed %.3f: no proposal from peak %.3f, best %.3f", iter, per, fixed, v.Peak, opt)
			}
			continue
		}
		proposals++
		if pr.Peak > opt*1.05+1e-12 {
			t.Errorf("iter %d: queues %.3f fixed %.3f: peak %.3f, more than 5%% above the best %.3f", iter, per, fixed, pr.Peak, opt)
		}
		if want := fewestMoves(per, fixed, count, 4, opt*1.05); len(pr.Moves) != want {
			t.Errorf("iter %d: queues %.3f fixed %.3f: %d moves to peak %.3f, want %d (the fewest within 5%% of %.3f)",
				iter, per, fixed, len(pr.Moves), pr.Peak, want, opt)
		}
	}
	if proposals < 100 {
		t.Errorf("%d proposals in 200 cases: the cases test too little", proposals)
	}
}

// TestBalanceProperties checks, on random machines, devices and loads:
// count's placement and peak without a held one; a proposal lowers the
// peak, moves only busy queues, keeps each numa-hop device's queues per
// hop (so its mean distance), stays on allowed CPUs; adopting it gives its
// peak; planning is deterministic.
func TestBalanceProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for iter := range 30 {
		m := randomMachine(r)
		f := newFixture(t, m)
		devices := 1 + r.IntN(3)
		var pcis []string
		for d := range devices {
			pci := fmt.Sprintf("0000:%02x:00.0", 0x40+d)
			pcis = append(pcis, pci)
			f.virtio(pci, d, 1+r.IntN(10), 24+40*d, r.IntN(len(m.Nodes)+1)-1)
		}
		b := readBack(t, f)
		irq := map[int]float64{}
		for _, q := range b.Inventory.IRQs {
			if r.IntN(3) > 0 {
				irq[q.Number] = 0.4 * r.Float64() * r.Float64()
			}
		}
		un := map[int]float64{}
		for c := range b.Snapshot.Online().All() {
			if r.IntN(4) == 0 {
				un[c] = 0.3 * r.Float64()
			}
		}
		l := b.loads(irq, nil, un)
		for _, policyName := range []string{"auto", "numa-hop", "linear"} {
			name := fmt.Sprintf("iter %d %s (online %s)", iter, policyName, b.Snapshot.Online())
			rule := fmt.Sprintf("devices:\n  - match: {driver: virtio_net}\n    policy: %s\n", policyName)
			countCfg, cfg := parseConfig(t, rule), parseConfig(t, loadCfg+rule)
			count := b.plan(countCfg, policy.Balancing{})
			bal := policy.Balancing{Loads: l, MaxMoves: 1 + r.IntN(20), MinGain: 0}
			p := b.plan(cfg, bal)
			for _, pci := range pcis {
				if got, want := queueCPU(t, p, pci), queueCPU(t, count, pci); !slices.Equal(got, want) {
					t.Fatalf("%s: %s without a held placement on %v, count's %v", name, pci, got, want)
				}
			}
			if again := b.plan(cfg, bal); !reflect.DeepEqual(again.Doc(), p.Doc()) {
				t.Fatalf("%s: two plans of the same input differ", name)
			}
			v := p.Balance
			if v == nil || !v.Ready {
				t.Fatalf("%s: Balance %+v", name, v)
			}
			pr := v.Proposal
			if pr == nil {
				continue
			}
			if pr.Peak >= v.Peak || len(pr.Moves) > bal.MaxMoves {
				t.Fatalf("%s: proposal peak %v from %v with %d moves (max %d)", name, pr.Peak, v.Peak, len(pr.Moves), bal.MaxMoves)
			}
			for _, mv := range pr.Moves {
				if mv.Load < 0.001 {
					t.Errorf("%s: moves idle queue %+v", name, mv)
				}
				if !p.Allowed.Contains(mv.To) {
					t.Errorf("%s: moves to CPU %d, not allowed (%s)", name, mv.To, p.Allowed)
				}
			}
			after := adopt(t, b, cfg, l, p)
			if math.Abs(after.Balance.Peak-pr.Peak) > 1e-9 || after.Balance.Reset != 0 {
				t.Fatalf("%s: adopted peak %v reset %d, proposal's %v", name, after.Balance.Peak, after.Balance.Reset, pr.Peak)
			}
			exception := 0 // queues count put past their bound, in the package
			for _, d := range count.Devices {
				if d.Locality != nil {
					exception += d.Locality.InPackage
				}
			}
			for _, pci := range pcis {
				if device(t, count, pci).Policy != config.PolicyNUMAHop {
					continue // linear weighs every CPU alike
				}
				if got, want := hopCounts(t, after, pci), hopCounts(t, count, pci); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %s queues per hop %v after balancing, count's %v", name, pci, got, want)
				}
				// Balancing keeps each queue within its locality bound.
				if l := device(t, after, pci).Locality; l != nil && (l.Farther > 0 || exception == 0 && l.InPackage > 0) {
					t.Errorf("%s: %s locality %+v after balancing (count's exception: %d queues)", name, pci, l, exception)
				}
			}
		}
	}
}

// hopCounts counts a device's placed queues per hop level.
func hopCounts(t testing.TB, p *policy.Plan, pci string) map[int]int {
	t.Helper()
	out := map[int]int{}
	seen := map[int]bool{}
	for _, q := range device(t, p, pci).IRQs {
		if q.Role == policy.RoleQueue && q.CPU >= 0 && !seen[q.Queue] {
			seen[q.Queue] = true
			out[q.Hop]++
		}
	}
	return out
}
