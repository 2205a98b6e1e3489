package policy_test

// The tests in this file check the placement objective
// (docs/placement.md) on the fleet corpus (fakesys.Shapes) and on
// random hosts against a reference written here: the drivers' own
// spreads from the distance table alone, and the best stacking the
// locality bound allows, by a maximum flow over single CPUs that
// shares no code with the planner's flow over cells.

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/internal/fakesys/fakeplan"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
)

// refQueue is one movable queue of a numa-hop device, as the reference
// sees it.
type refQueue struct {
	dev     string
	node    int // the device's node; -1: no bound
	driver  int // the CPU the drivers' spread gives it
	planned int // the CPU the plan gives all its IRQs
	irqs    int
}

// refHost is what the reference knows of a host: distances, CPU
// nodes, packages, cores and LLCs, all from the snapshot's raw facts.
type refHost struct {
	s       *topology.Snapshot
	allowed []int
	fixed   map[int]int // queues per CPU of linear devices
}

// dist is node_distance(a, b).
func (h refHost) dist(a, b int) int { return h.s.Distance(a, b) }

// cpuNode is cpu's node.
func (h refHost) cpuNode(cpu int) int { c, _ := h.s.CPU(cpu); return c.Node }

// order is the kernel's hop order over the allowed CPUs for a device on
// node: by distance from node (from the nearest node with CPUs for a
// memory-only one), then CPU id; by id for no node.
func (h refHost) order(node int) []int {
	out := slices.Clone(h.allowed)
	from := node
	if node >= 0 && h.s.Distance(node, node) < 0 {
		from = -1 // not an online node
	}
	if from >= 0 && slices.IndexFunc(h.s.Nodes(), func(n topology.Node) bool { return n.ID == from && !n.CPUs.IsEmpty() }) < 0 {
		best := -1
		for _, n := range h.s.Nodes() {
			if !n.CPUs.IsEmpty() && (best < 0 || h.dist(node, n.ID) < h.dist(node, best)) {
				best = n.ID
			}
		}
		from = best
	}
	if from < 0 {
		return out
	}
	slices.SortStableFunc(out, func(a, b int) int {
		return cmp.Or(cmp.Compare(h.dist(from, h.cpuNode(a)), h.dist(from, h.cpuNode(b))), cmp.Compare(a, b))
	})
	return out
}

// permits returns the allowed CPUs a queue may use: no farther from its
// node than its driver's CPU; with pkg, also that CPU's package.
func (h refHost) permits(q refQueue, pkg bool) []int {
	var out []int
	dc, _ := h.s.CPU(q.driver)
	for _, c := range h.allowed {
		cc, _ := h.s.CPU(c)
		if q.node < 0 || h.dist(q.node, cc.Node) <= h.dist(q.node, dc.Node) || pkg && dc.Package >= 0 && cc.Package == dc.Package {
			out = append(out, c)
		}
	}
	return out
}

// dinic is a textbook maximum flow.
type dinic struct {
	adj   [][]int
	to    []int
	cap   []int
	level []int
	it    []int
}

func newDinic(n int) *dinic { return &dinic{adj: make([][]int, n)} }

func (d *dinic) edge(u, v, c int) {
	d.adj[u] = append(d.adj[u], len(d.to))
	d.to, d.cap = append(d.to, v), append(d.cap, c)
	d.adj[v] = append(d.adj[v], len(d.to))
	d.to, d.cap = append(d.to, u), append(d.cap, 0)
}

func (d *dinic) maxflow(s, t int) int {
	total := 0
	for {
		d.level = make([]int, len(d.adj))
		for i := range d.level {
			d.level[i] = -1
		}
		d.level[s] = 0
		q := []int{s}
		for len(q) > 0 {
			u := q[0]
			q = q[1:]
			for _, e := range d.adj[u] {
				if d.cap[e] > 0 && d.level[d.to[e]] < 0 {
					d.level[d.to[e]] = d.level[u] + 1
					q = append(q, d.to[e])
				}
			}
		}
		if d.level[t] < 0 {
			return total
		}
		d.it = make([]int, len(d.adj))
		for {
			f := d.push(s, t, 1<<40)
			if f == 0 {
				break
			}
			total += f
		}
	}
}

func (d *dinic) push(u, t, f int) int {
	if u == t {
		return f
	}
	for ; d.it[u] < len(d.adj[u]); d.it[u]++ {
		e := d.adj[u][d.it[u]]
		v := d.to[e]
		if d.cap[e] > 0 && d.level[v] == d.level[u]+1 {
			if got := d.push(v, t, min(f, d.cap[e])); got > 0 {
				d.cap[e] -= got
				d.cap[e^1] += got
				return got
			}
		}
	}
	return 0
}

// fits reports whether qs fit with at most m queues per CPU, mc per core
// and ml per LLC (counting the fixed ones) on the CPUs each permits.
func (h refHost) fits(qs []refQueue, pkg bool, m, mc, ml int) bool {
	groups := map[string][]int{}
	var keys []string
	count := map[string]int{}
	for _, q := range qs {
		p := h.permits(q, pkg)
		k := fmt.Sprint(p)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
			groups[k] = p
		}
		count[k]++
	}
	cores, llcs := map[int]int{}, map[int]int{}
	for _, c := range h.allowed {
		cc, _ := h.s.CPU(c)
		if _, ok := cores[cc.Core]; !ok {
			cores[cc.Core] = len(cores)
		}
		if !cc.LLC.IsEmpty() {
			if _, ok := llcs[cc.LLC.First()]; !ok {
				llcs[cc.LLC.First()] = len(llcs)
			}
		}
	}
	// source, groups, CPUs by id, cores, LLCs (one more for "none"), sink
	g0, c0 := 1, 1+len(keys)
	k0 := c0 + h.s.Online().Last() + 1
	l0 := k0 + len(cores)
	t := l0 + len(llcs) + 1
	d := newDinic(t + 1)
	for i, k := range keys {
		d.edge(0, g0+i, count[k])
		for _, c := range groups[k] {
			d.edge(g0+i, c0+c, len(qs))
		}
	}
	coreFixed, llcFixed := map[int]int{}, map[int]int{}
	for _, c := range h.allowed {
		cc, _ := h.s.CPU(c)
		coreFixed[cc.Core] += h.fixed[c]
		if !cc.LLC.IsEmpty() {
			llcFixed[cc.LLC.First()] += h.fixed[c]
		}
	}
	for _, c := range h.allowed {
		cc, _ := h.s.CPU(c)
		d.edge(c0+c, k0+cores[cc.Core], max(0, m-h.fixed[c]))
	}
	seen := map[int]bool{}
	for _, c := range h.allowed {
		cc, _ := h.s.CPU(c)
		if seen[cc.Core] {
			continue
		}
		seen[cc.Core] = true
		l := l0 + len(llcs) // no LLC
		if !cc.LLC.IsEmpty() {
			l = l0 + llcs[cc.LLC.First()]
		}
		d.edge(k0+cores[cc.Core], l, max(0, mc-coreFixed[cc.Core]))
	}
	for first, i := range llcs {
		d.edge(l0+i, t, max(0, ml-llcFixed[first]))
	}
	d.edge(l0+len(llcs), t, len(qs))
	return d.maxflow(0, t) == len(qs)
}

// least is the least v in [1, hi] for which ok holds (ok(hi) does).
func least(hi int, ok func(int) bool) int {
	lo := 1
	for lo < hi {
		if mid := (lo + hi) / 2; ok(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}

// objective checks p against the reference and returns its line of the
// corpus table.
func objective(t *testing.T, name string, s *topology.Snapshot, p *policy.Plan) string {
	t.Helper()
	h := refHost{s: s, allowed: p.Allowed.CPUs(), fixed: map[int]int{}}
	var qs []refQueue
	load := map[int]int{} // queues per CPU as planned, fixed included
	for _, d := range p.Devices {
		byQueue := map[int]*refQueue{}
		var order []int
		for _, q := range d.IRQs {
			if q.Role != policy.RoleQueue || q.Managed || q.Unreadable || q.NoCPU || q.Planned.IsEmpty() {
				continue
			}
			if r, ok := byQueue[q.Queue]; ok {
				if r.planned != q.Planned.First() {
					t.Errorf("%s: %s queue %d split over CPUs %d and %s", name, d.Label(), q.Queue, r.planned, q.Planned)
				}
				r.irqs++
				continue
			}
			byQueue[q.Queue] = &refQueue{dev: d.Label(), node: d.Node, planned: q.Planned.First(), irqs: 1}
			order = append(order, q.Queue)
		}
		slices.Sort(order)
		switch {
		case d.Policy == config.PolicyLinear && d.Mask == config.MaskCPU:
			for k, qi := range order {
				want := h.allowed[k%len(h.allowed)]
				if byQueue[qi].planned != want {
					t.Errorf("%s: linear %s queue %d on %d, want %d", name, d.Label(), qi, byQueue[qi].planned, want)
				}
				h.fixed[want]++
				load[want]++
			}
		case d.Policy == config.PolicyNUMAHop && d.Mask == config.MaskCPU:
			ord := h.order(d.Node)
			for k, qi := range order {
				r := byQueue[qi]
				r.driver = ord[k%len(ord)]
				if d.SpreadNode == topology.NoNode {
					r.node = -1
				}
				qs = append(qs, *r)
				load[r.planned]++
			}
		}
	}
	if len(qs) == 0 {
		return fmt.Sprintf("%-28s no numa-hop queue", name)
	}
	maxFixed := 0
	for _, n := range h.fixed {
		maxFixed = max(maxFixed, n)
	}
	big := len(qs) + maxFixed*max(1, len(h.allowed))
	strict := least(big, func(m int) bool { return h.fits(qs, false, m, big, big) })
	relaxed := least(big, func(m int) bool { return h.fits(qs, true, m, big, big) })
	pkg := max(relaxed, maxFixed) < max(strict, maxFixed)
	m := strict
	if pkg {
		m = relaxed
	}
	mc := least(big, func(mc int) bool { return h.fits(qs, pkg, m, mc, big) })
	ml := least(big, func(ml int) bool { return h.fits(qs, pkg, m, mc, ml) })

	// Locality: no queue farther than its driver's CPU, but inside that
	// CPU's package where that lowered the most per CPU.
	far, inPkg := 0, 0
	var dist, ddist float64
	drivers := map[int]int{}
	for _, q := range qs {
		drivers[q.driver]++
		if !slices.Contains(h.permits(q, false), q.planned) {
			if pkg && slices.Contains(h.permits(q, true), q.planned) {
				inPkg++
			} else {
				far++
				t.Errorf("%s: %s queue on CPU %d (node %d), farther than its driver's CPU %d (node %d) from node %d",
					name, q.dev, q.planned, h.cpuNode(q.planned), q.driver, h.cpuNode(q.driver), q.node)
			}
		}
		if q.node >= 0 {
			dist += float64(h.dist(q.node, h.cpuNode(q.planned)))
			ddist += float64(h.dist(q.node, h.cpuNode(q.driver)))
		}
	}
	// Stacking: the reference's best on every CPU, core and LLC holding
	// a numa-hop queue, never above the drivers' spreads together.
	cpuMax, coreMax, llcMax := 0, 0, 0
	core, llc := map[int]int{}, map[int]int{}
	hop := map[int]bool{}
	for _, q := range qs {
		hop[q.planned] = true
	}
	for c, n := range load {
		cc, _ := s.CPU(c)
		core[cc.Core] += n
		if !cc.LLC.IsEmpty() {
			llc[cc.LLC.First()] += n
		}
	}
	for c := range hop {
		cc, _ := s.CPU(c)
		cpuMax, coreMax = max(cpuMax, load[c]), max(coreMax, core[cc.Core])
		if !cc.LLC.IsEmpty() {
			llcMax = max(llcMax, llc[cc.LLC.First()])
		}
	}
	driversMax := maxFixed
	for c, n := range drivers {
		driversMax = max(driversMax, n+h.fixed[c])
	}
	if cpuMax != m {
		t.Errorf("%s: %d queues on the busiest CPU, the reference's best is %d (package exception %v)", name, cpuMax, m, pkg)
	}
	if coreMax != mc {
		t.Errorf("%s: %d queues on the busiest core, the reference's best is %d", name, coreMax, mc)
	}
	if len(llc) > 0 && llcMax != ml && !coreSpansLLCs(s) {
		t.Errorf("%s: %d queues on the busiest LLC, the reference's best is %d", name, llcMax, ml)
	}
	if max(cpuMax, maxFixed) > driversMax {
		t.Errorf("%s: %d queues on one CPU, the drivers' spreads put at most %d", name, cpuMax, driversMax)
	}
	st, ds := p.Stacking, p.DriversStacking
	return fmt.Sprintf("%-28s farther %d, in package %d, mean distance %.2f / %.2f, queue IRQs per CPU %d / %d, core %d / %d, LLC %d / %d",
		name, far, inPkg, dist/float64(len(qs)), ddist/float64(len(qs)), st.CPU, ds.CPU, st.Core, ds.Core, st.LLC, ds.LLC)
}

// shapes holds each corpus host as read, by name: building the trees
// is most of these tests' time.
var shapes sync.Map

// coreSpansLLCs reports whether some core's threads sit in different
// LLCs (POWER10's SMT8 cores, two L3s each), which the reference's flow,
// a tree of CPUs in cores in LLCs, cannot model.
func coreSpansLLCs(s *topology.Snapshot) bool {
	for c := range s.Online().All() {
		cc, _ := s.CPU(c)
		if !cc.LLC.IsEmpty() && !cc.Siblings.IsSubsetOf(cc.LLC) {
			return true
		}
	}
	return false
}

// planShape builds sh (once for a corpus host) and plans it with its
// bans.
func planShape(t *testing.T, sh fakesys.Shape, corpus bool) (balanced, *config.Config, *policy.Plan) {
	t.Helper()
	var b balanced
	if v, ok := shapes.Load(sh.Name); ok && corpus {
		b = v.(balanced)
	} else {
		tree := fakesys.New(t)
		sh.Build(tree)
		b = balanced{fakeplan.Read(t, tree)}
		if corpus {
			shapes.Store(sh.Name, b)
		}
	}
	cfg := config.Default()
	if sh.Banned != "" {
		cfg = parseConfig(t, fmt.Sprintf("banned_cpus: %q\n", sh.Banned))
	}
	return b, cfg, b.Plan(cfg, policy.Memory{}, policy.Balancing{})
}

// TestObjectiveOnFleet checks the objective on every host of the fleet
// corpus and logs one line per host: queue IRQs farther than the
// drivers put them (must be 0), those in the package exception, mean
// distance planned / drivers', and the most queue IRQs per CPU, core
// and LLC planned / drivers'.
func TestObjectiveOnFleet(t *testing.T) {
	var lines []string
	for _, sh := range fakesys.Shapes() {
		b, _, p := planShape(t, sh, true)
		lines = append(lines, objective(t, sh.Name, b.Snapshot, p))
	}
	t.Log("\n" + strings.Join(lines, "\n"))
}

// TestObjectiveOnRandomHosts is TestObjectiveOnFleet on random hosts.
func TestObjectiveOnRandomHosts(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 1))
	for i := range 30 {
		sh := fakesys.RandomShape(r)
		b, _, p := planShape(t, sh, false)
		objective(t, fmt.Sprintf("random %d (%s)", i, sh.What), b.Snapshot, p)
	}
}

// TestOneDeviceMoves plans each corpus host, then again without one of
// its devices and with that device back, the others' IRQs where the
// plan before put them, and logs the most queues of other devices that
// moved: adding or removing a device disturbs the rest little.
func TestOneDeviceMoves(t *testing.T) {
	var lines []string
	for _, sh := range fakesys.Shapes() {
		b, cfg, p := planShape(t, sh, true)
		worst, worstDev := 0, ""
		for i, d := range b.Inventory.Devices {
			if i%max(1, len(b.Inventory.Devices)/8) != 0 {
				continue // up to 8 devices a host: the scale host has 64
			}
			without := withPlanned(b.Inventory, p, d.PCI)
			p1 := fakeplan.Machine{Snapshot: b.Snapshot, Inventory: without}.Plan(cfg, policy.Memory{}, policy.Balancing{})
			p2 := fakeplan.Machine{Snapshot: b.Snapshot, Inventory: withPlanned(b.Inventory, p1, "")}.Plan(cfg, policy.Memory{}, policy.Balancing{})
			for _, n := range []int{moves(p, p1, d.PCI), moves(p1, p2, d.PCI)} {
				if n > worst {
					worst, worstDev = n, d.PCI
				}
			}
		}
		lines = append(lines, fmt.Sprintf("%-28s at most %d queue IRQs of other devices move (%s)", sh.Name, worst, cmp.Or(worstDev, "none")))
	}
	t.Log("\n" + strings.Join(lines, "\n"))
}

// withPlanned returns inv with every IRQ's affinity as p plans it (as
// after apply), without device drop ("" for none).
func withPlanned(inv *inventory.Inventory, p *policy.Plan, drop string) *inventory.Inventory {
	planned := map[int]cpumask.Mask{}
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			if !q.Planned.IsEmpty() {
				planned[q.Number] = q.Planned
			}
		}
	}
	out := *inv
	out.Devices = slices.DeleteFunc(slices.Clone(inv.Devices), func(d inventory.Device) bool { return d.PCI == drop })
	out.IRQs = slices.Clone(inv.IRQs)
	for i, q := range out.IRQs {
		if m, ok := planned[q.Number]; ok {
			out.IRQs[i].Affinity = m
		}
	}
	return &out
}

// moves counts the queue IRQs of devices other than skip that a and b
// plan on different CPUs.
func moves(a, b *policy.Plan, skip string) int {
	at := map[int]int{}
	for _, d := range a.Devices {
		for _, q := range d.IRQs {
			if d.PCI != skip && q.Role == policy.RoleQueue && q.CPU >= 0 {
				at[q.Number] = q.CPU
			}
		}
	}
	n := 0
	for _, d := range b.Devices {
		for _, q := range d.IRQs {
			if c, ok := at[q.Number]; ok && q.CPU >= 0 && c != q.CPU {
				n++
			}
		}
	}
	return n
}

// TestObjectiveExamples checks docs/placement.md's examples of the objective.
func TestObjectiveExamples(t *testing.T) {
	byName := map[string]fakesys.Shape{}
	for _, sh := range fakesys.Shapes() {
		byName[sh.Name] = sh
	}
	// One 32-queue NIC per node of a 2-socket NPS2 host: each NIC's
	// queues stay on its own node (the drivers put half on the socket's
	// other node), no more queues per CPU.
	_, _, p := planShape(t, byName["nps2-4x16-mlx5"], true)
	for _, d := range p.Devices {
		if l := d.Locality; l == nil || l.Mean != 10 || l.Worst != 10 || l.DriversMean != 11 {
			t.Errorf("nps2-4x16-mlx5: %s locality %+v, want mean and worst 10, drivers' 11", d.Label(), l)
		}
	}
	if p.Stacking.CPU != 2 || p.DriversStacking.CPU != 2 {
		t.Errorf("nps2-4x16-mlx5: stacking %+v, drivers' %+v, want 2 per CPU", p.Stacking, p.DriversStacking)
	}
	// The scale host: no NIC's queue on the far socket (distance 32).
	_, _, p = planShape(t, byName["scale-256"], true)
	for _, d := range p.Devices {
		if l := d.Locality; l == nil || l.Worst > 12 {
			t.Errorf("scale-256: %s locality %+v, want no queue past the socket", d.Label(), l)
		}
	}
	// Two 16-queue NICs on node 0 of a socket of two 16-CPU nodes: the
	// drivers stack 2 per CPU on node 0; the package exception puts half
	// of each NIC on node 1, 1 per CPU.
	tree := fakesys.New(t)
	m := fakesys.Machine{Online: "0-63", Package: func(c int) int { return c / 32 }}
	dist := fakesys.TieredDistances(4, 32, fakesys.Tier{Size: 2, Distance: 12})
	for n := range 4 {
		m.Nodes = append(m.Nodes, fakesys.Node{ID: n, CPUs: fmt.Sprintf("%d-%d", 16*n, 16*n+15), Distance: dist[n]})
	}
	tree.AddMachine(m)
	tree.AddInterrupts(fakesys.MustMask(t, m.Online).CPUs())
	for i, bdf := range []string{"0000:41:00.0", "0000:41:00.1"} {
		var irqs []fakesys.IRQSpec
		for k := range 16 {
			irqs = append(irqs, fakesys.IRQSpec{Number: 100 + 20*i + k, Name: fmt.Sprintf("mlx5_comp%d@pci:%s", k, bdf)})
		}
		tree.AddMSIXDevice(fakesys.PCIDevice{BDF: bdf, Driver: "mlx5_core", Class: "0x020000", Interfaces: []string{fmt.Sprintf("eth%d", i)}}, irqs...)
	}
	b := balanced{fakeplan.Read(t, tree)}
	p = b.Plan(nil, policy.Memory{}, policy.Balancing{})
	objective(t, "snc", b.Snapshot, p)
	for _, d := range p.Devices {
		if l := d.Locality; l == nil || l.InPackage != 8 || l.Farther != 0 || l.Worst != 12 {
			t.Errorf("snc: %s locality %+v, want 8 queues on node 1, in the package", d.Label(), l)
		}
	}
	if p.Stacking.CPU != 1 || p.DriversStacking.CPU != 2 {
		t.Errorf("snc: stacking %+v, drivers' %+v, want 1 and 2 per CPU", p.Stacking, p.DriversStacking)
	}
}

// TestOneDeviceOverCoresAndCaches: where the kernel's numbering puts
// consecutive queues on one core (POWER's SMT8 threads) or one LLC (an
// EPYC CCD of 8 cores), a device alone still gets one queue per core,
// and as few per LLC as its node allows.
func TestOneDeviceOverCoresAndCaches(t *testing.T) {
	for _, tc := range []struct {
		name      string
		m         fakesys.Machine
		queues    int
		core, llc int
	}{
		{"power smt8", fakesys.Machine{Online: "0-63",
			Siblings: func(c int) string { return fmt.Sprintf("%d-%d", c/8*8, c/8*8+7) },
			LLC:      func(c int) string { return fmt.Sprintf("%d-%d", c/8*8, c/8*8+7) },
			Nodes:    []fakesys.Node{{ID: 0, CPUs: "0-31", Distance: []int{10, 40}}, {ID: 1, CPUs: "32-63", Distance: []int{40, 10}}},
		}, 4, 1, 1},
		{"epyc ccd", fakesys.Machine{Online: "0-127",
			Siblings: func(c int) string { return fmt.Sprintf("%d,%d", c%64, c%64+64) },
			LLC:      func(c int) string { b := c % 64 / 8 * 8; return fmt.Sprintf("%d-%d,%d-%d", b, b+7, b+64, b+71) },
			Nodes: []fakesys.Node{{ID: 0, CPUs: "0-31,64-95", Distance: []int{10, 32}},
				{ID: 1, CPUs: "32-63,96-127", Distance: []int{32, 10}}},
		}, 16, 1, 4},
	} {
		tree := fakesys.New(t)
		tree.AddMachine(tc.m)
		tree.AddInterrupts(fakesys.MustMask(t, tc.m.Online).CPUs())
		var irqs []fakesys.IRQSpec
		for k := range tc.queues {
			irqs = append(irqs, fakesys.IRQSpec{Number: 100 + k, Name: fmt.Sprintf("mlx5_comp%d@pci:0000:01:00.0", k)})
		}
		tree.AddMSIXDevice(fakesys.PCIDevice{BDF: "0000:01:00.0", Driver: "mlx5_core", Class: "0x020000"}, irqs...)
		b := balanced{fakeplan.Read(t, tree)}
		p := b.Plan(nil, policy.Memory{}, policy.Balancing{})
		objective(t, tc.name, b.Snapshot, p)
		if p.Stacking.Core != tc.core || p.Stacking.LLC != tc.llc || p.Devices[0].Locality.Worst != 10 {
			t.Errorf("%s: stacking %+v (drivers' %+v), locality %+v; want %d per core, %d per LLC, all on node 0",
				tc.name, p.Stacking, p.DriversStacking, p.Devices[0].Locality, tc.core, tc.llc)
		}
	}
}
