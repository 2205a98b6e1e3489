package policy

import (
	"cmp"
	"slices"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/topology"
)

// hopQueue is one queue of a numa-hop device (mask cpu) for spread.
type hopQueue struct {
	dev, queue int // the device's index in Plan.Devices, the queue index
	rank       int // its place among the device's queues
	kernel     int // the drivers' CPU: Order[rank % len(Order)]
	node       int // the device's node; NoNode: no locality bound
	bound      int // the distance from node to kernel's node
	pkg        int // kernel's package, -1 unknown
	current    int // the single CPU its first IRQ is on now, -1 for none
	cpu        int // the CPU spread gave it
}

// spreadCell is the allowed CPUs of one (node, package, LLC).
type spreadCell struct {
	node, pkg int
	llc       int     // index into spreader.llcCap
	cores     [][]int // the cell's CPUs, by core, ascending
}

// spreader places the queues of every numa-hop device at once, by the
// docs/placement.md's "The placement objective". load starts with the queues other
// policies placed.
type spreader struct {
	s              *topology.Snapshot
	load           []int // by CPU id: queues on it, fixed ones first; -1 not allowed
	cells          []spreadCell
	llcCap         []int // per LLC: fixed queues; -1 for an unknown LLC (no limit)
	cellOf, coreOf []int // by CPU id: index in cells, in the cell's cores; -1 not allowed
	maxDst         int
}

// newSpreader groups the allowed CPUs into cells; fixed is as load.
func newSpreader(s *topology.Snapshot, allowed cpumask.Mask, fixed []int) *spreader {
	sp := &spreader{s: s, load: slices.Clone(fixed), cellOf: slices.Repeat([]int{-1}, len(fixed)), coreOf: slices.Repeat([]int{-1}, len(fixed))}
	type key struct{ node, pkg, llc int }
	cellOf := map[key]int{}
	llcOf := map[int]int{}
	for cpu := range allowed.All() {
		c, _ := s.CPU(cpu)
		llcID := -1 // unknown: one LLC per cell, with no limit
		if !c.LLC.IsEmpty() {
			llcID = c.LLC.First()
		}
		k := key{c.Node, c.Package, llcID}
		ci, ok := cellOf[k]
		if !ok {
			li, ok := llcOf[llcID]
			if !ok {
				li = len(sp.llcCap)
				sp.llcCap = append(sp.llcCap, 0)
				if llcID >= 0 {
					llcOf[llcID] = li
				} else {
					sp.llcCap[li] = -1
				}
			}
			ci = len(sp.cells)
			cellOf[k] = ci
			sp.cells = append(sp.cells, spreadCell{node: c.Node, pkg: c.Package, llc: li})
		}
		sp.cellOf[cpu] = ci
		cell := &sp.cells[ci]
		if sp.llcCap[cell.llc] >= 0 {
			sp.llcCap[cell.llc] += max(0, fixed[cpu])
		}
		// A core's first CPU in the cell comes first (ids ascend).
		i := len(cell.cores)
		for t := range s.Siblings(cpu).All() {
			if t < cpu && sp.cellOf[t] == ci {
				i = sp.coreOf[t]
				break
			}
		}
		if i == len(cell.cores) {
			cell.cores = append(cell.cores, nil)
		}
		sp.coreOf[cpu] = i
		cell.cores[i] = append(cell.cores[i], cpu)
	}
	for _, n := range s.Nodes() {
		for _, d := range n.Distance {
			sp.maxDst = max(sp.maxDst, d)
		}
	}
	return sp
}

// cellAt is the index of cpu's cell, -1 for a CPU not allowed (or -1).
func (sp *spreader) cellAt(cpu int) int {
	if cpu < 0 || cpu >= len(sp.cellOf) {
		return -1
	}
	return sp.cellOf[cpu]
}

// coreLoad is the queues on cpus, one core's CPUs in one cell.
func (sp *spreader) coreLoad(cpus []int) int {
	n := 0
	for _, c := range cpus {
		n += max(0, sp.load[c])
	}
	return n
}

// room is how many more queues cell ci takes under m per CPU, mc per core.
func (sp *spreader) room(ci, m, mc int) int {
	total := 0
	for _, core := range sp.cells[ci].cores {
		r := 0
		for _, c := range core {
			r += max(0, m-sp.load[c])
		}
		if mc < flowInf {
			r = min(r, max(0, mc-sp.coreLoad(core)))
		}
		total += r
	}
	return total
}

// spreadClass is the queues that may use the same cells at the same
// costs: one node, bound, package and cell of the drivers' CPU.
type spreadClass struct {
	node, bound, pkg, home int
	queues                 []int // indices into the spread's queues
}

// allows is withinBound for a queue of cl and cell c.
func (sp *spreader) allows(cl spreadClass, c spreadCell, relax bool) (ok, far bool) {
	pkg := -1
	if relax {
		pkg = cl.pkg
	}
	return withinBound(sp.s, cl.node, cl.bound, pkg, c.node, c.pkg)
}

// withinBound reports whether a CPU on node at, package atPkg, may take
// a queue of a device on node whose drivers' CPU is bound away in
// package pkg (-1: no package exception); far: only by the exception.
func withinBound(s *topology.Snapshot, node, bound, pkg, at, atPkg int) (ok, far bool) {
	if node == topology.NoNode || s.Distance(node, at) <= bound {
		return true, false
	}
	return pkg >= 0 && atPkg == pkg, true
}

// caps bound the queues per CPU, core and LLC; relax: package exception.
type caps struct {
	cpu, core, llc int
	relax          bool
}

// network builds the flow of classes into cells under c: source 0,
// sink 1, classes, cells, LLCs. With costs, cells cost more per level
// of load and classes pay for distance and the package exception. It
// returns the edge of each (class, cell), -1 for none.
func (sp *spreader) network(classes []spreadClass, c caps, costs bool) (*flowNet, [][]int) {
	nc := len(classes)
	cell0, llc0 := 2+nc, 2+nc+len(sp.cells)
	f := newFlowNet(llc0 + len(sp.llcCap))
	// Each term outweighs all sums of the later ones: package
	// exception, load level, distance, home cell (dropped on overflow).
	total := int64(0)
	for _, cl := range classes {
		total += int64(len(cl.queues))
	}
	homeCost := int64(1)
	distCost := total + 1
	if total*int64(sp.maxDst+1)*distCost*int64(c.cpu+1)*total > 1<<58 {
		homeCost, distCost = 0, 1
	}
	levelCost := total*int64(sp.maxDst)*distCost + total*homeCost + 1
	farCost := total*int64(c.cpu)*levelCost + 1
	edges := make([][]int, nc)
	for i, cl := range classes {
		f.add(0, 2+i, len(cl.queues), 0)
		edges[i] = make([]int, len(sp.cells))
		for j, cell := range sp.cells {
			edges[i][j] = -1
			ok, far := sp.allows(cl, cell, c.relax)
			if !ok {
				continue
			}
			var cost int64
			if costs && cl.node != topology.NoNode {
				cost = int64(sp.s.Distance(cl.node, cell.node)) * distCost
				if far {
					cost += farCost
				}
			}
			if costs && j != cl.home {
				cost += homeCost
			}
			edges[i][j] = f.add(2+i, cell0+j, flowInf, cost)
		}
	}
	for j, cell := range sp.cells {
		if !costs {
			f.add(cell0+j, llc0+cell.llc, sp.room(j, c.cpu, c.core), 0)
			continue
		}
		// One edge per level of load: equally near cells fill evenly.
		prev := 0
		for lv := 1; lv <= c.cpu; lv++ {
			r := sp.room(j, lv, c.core)
			if r > prev {
				f.add(cell0+j, llc0+cell.llc, r-prev, int64(lv)*levelCost)
				prev = r
			}
		}
	}
	for l, fixed := range sp.llcCap {
		r := flowInf
		if fixed >= 0 && c.llc < flowInf {
			r = max(0, c.llc-fixed)
		}
		f.add(llc0+l, 1, r, 0)
	}
	return f, edges
}

// fits reports whether every queue of classes has a place under c.
func (sp *spreader) fits(classes []spreadClass, total int, c caps) bool {
	f, _ := sp.network(classes, c, false)
	return f.run(0, 1) == total
}

// leastFit returns the least v in [lo, hi] with ok(v), else hi.
func leastFit(lo, hi int, ok func(int) bool) int {
	for lo < hi {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}

// place sets every qs[i].cpu; it reports the package exception taken.
func (sp *spreader) place(qs []hopQueue) bool {
	if len(qs) == 0 {
		return false
	}
	strict := sp.classes(qs, false)
	hi := 0
	kernel := slices.Clone(sp.load)
	maxFixed, maxCoreFixed, threads, llcSize := 0, 0, 1, 1
	for _, q := range qs {
		kernel[q.kernel]++
		hi = max(hi, kernel[q.kernel])
	}
	for _, cell := range sp.cells {
		n := 0
		for _, core := range cell.cores {
			n += len(core)
			threads = max(threads, len(core))
			maxCoreFixed = max(maxCoreFixed, sp.coreLoad(core))
			for _, c := range core {
				maxFixed = max(maxFixed, sp.load[c])
			}
		}
		llcSize = max(llcSize, n)
	}
	c := caps{core: flowInf, llc: flowInf}
	c.cpu = leastFit(1, hi, func(m int) bool { return sp.fits(strict, len(qs), caps{cpu: m, core: flowInf, llc: flowInf}) })
	classes := strict
	if relaxed := sp.classes(qs, true); len(relaxed) > 0 && max(c.cpu, maxFixed) > max(1, maxFixed) {
		m := leastFit(1, c.cpu, func(m int) bool {
			return sp.fits(relaxed, len(qs), caps{cpu: m, core: flowInf, llc: flowInf, relax: true})
		})
		if max(m, maxFixed) < max(c.cpu, maxFixed) {
			c.cpu, c.relax, classes = m, true, relaxed
		}
	}
	if threads > 1 {
		c.core = leastFit(1, maxCoreFixed+c.cpu*threads, func(mc int) bool { return sp.fits(classes, len(qs), caps{c.cpu, mc, flowInf, c.relax}) })
	}
	if slices.ContainsFunc(sp.llcCap, func(v int) bool { return v >= 0 }) {
		c.llc = leastFit(1, len(qs)+maxFixed*llcSize, func(ml int) bool { return sp.fits(classes, len(qs), caps{c.cpu, c.core, ml, c.relax}) })
	}
	f, edges := sp.network(classes, c, true)
	f.run(0, 1)
	sp.fill(qs, classes, edges, f, c)
	return c.relax
}

// classes groups qs by the cells they may use; with relax, nil unless
// the package exception widens some class.
func (sp *spreader) classes(qs []hopQueue, relax bool) []spreadClass {
	type key struct{ node, bound, pkg, home int }
	index := map[key]int{}
	var out []spreadClass
	wider := false
	for i, q := range qs {
		k := key{q.node, q.bound, -1, sp.cellOf[q.kernel]}
		if relax {
			k.pkg = q.pkg
		}
		ci, ok := index[k]
		if !ok {
			ci = len(out)
			index[k] = ci
			out = append(out, spreadClass{node: k.node, bound: k.bound, pkg: k.pkg, home: k.home})
			if relax && !wider {
				for _, cell := range sp.cells {
					if ok, far := sp.allows(out[ci], cell, true); ok && far {
						wider = true
						break
					}
				}
			}
		}
		out[ci].queues = append(out[ci].queues, i)
	}
	if relax && !wider {
		return nil
	}
	return out
}

// fill hands each class's queues to their cells, nearest first.
func (sp *spreader) fill(qs []hopQueue, classes []spreadClass, edges [][]int, f *flowNet, c caps) {
	inCell := make([][]int, len(sp.cells))
	for i, cl := range classes {
		quota := make([]int, len(sp.cells))
		var cells []int
		for j, e := range edges[i] {
			if e >= 0 && f.flowOn(e) > 0 {
				quota[j] = f.flowOn(e)
				cells = append(cells, j)
			}
		}
		// The drivers' cell, then the current one: a lone device goes
		// where its driver puts it, and a placement in force is kept.
		rest := slices.Clone(cl.queues)
		slices.SortStableFunc(rest, func(a, b int) int { return byRank(qs[a], qs[b]) })
		for _, cpuOf := range []func(q hopQueue) int{kernelCPU, currentCPU} {
			rest = slices.DeleteFunc(rest, func(qi int) bool {
				j := sp.cellAt(cpuOf(qs[qi]))
				if j < 0 || quota[j] == 0 {
					return false
				}
				quota[j]--
				inCell[j] = append(inCell[j], qi)
				return true
			})
		}
		dist := func(j int) int {
			if cl.node == topology.NoNode {
				return 0
			}
			return sp.s.Distance(cl.node, sp.cells[j].node)
		}
		slices.SortStableFunc(cells, func(a, b int) int { return cmp.Compare(dist(a), dist(b)) })
		for _, qi := range rest {
			for len(cells) > 0 && quota[cells[0]] == 0 {
				cells = cells[1:]
			}
			if len(cells) == 0 { // not reached: the flow placed every queue
				qs[qi].cpu = qs[qi].kernel
				sp.load[qs[qi].kernel]++
				continue
			}
			quota[cells[0]]--
			inCell[cells[0]] = append(inCell[cells[0]], qi)
		}
	}
	for j, in := range inCell {
		sp.fillCell(j, qs, in, c)
	}
}

func kernelCPU(q hopQueue) int  { return q.kernel }
func currentCPU(q hopQueue) int { return q.current }

// byRank orders queues by their place in their device, then device.
func byRank(a, b hopQueue) int {
	return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.dev, b.dev))
}

// fillCell places the queues in on cell j's CPUs: on the drivers' or
// current CPU while under the cell's even levels, else on the least
// loaded core with room, its least loaded CPU, lowest first.
func (sp *spreader) fillCell(j int, qs []hopQueue, in []int, c caps) {
	if len(in) == 0 {
		return
	}
	cell := sp.cells[j]
	level := leastFit(1, c.cpu, func(lv int) bool { return sp.room(j, lv, c.core) >= len(in) })
	coreLevel := c.core
	if c.core < flowInf {
		coreLevel = leastFit(1, c.core, func(lc int) bool { return sp.room(j, level, lc) >= len(in) })
	}
	rest := slices.Clone(in)
	slices.SortStableFunc(rest, func(a, b int) int { return byRank(qs[a], qs[b]) })
	for _, cpuOf := range []func(q hopQueue) int{kernelCPU, currentCPU} {
		rest = slices.DeleteFunc(rest, func(qi int) bool {
			cpu := cpuOf(qs[qi])
			if sp.cellAt(cpu) != j || sp.load[cpu] >= level || sp.coreLoad(cell.cores[sp.coreOf[cpu]]) >= coreLevel {
				return false
			}
			qs[qi].cpu = cpu
			sp.load[cpu]++
			return true
		})
	}
	for _, qi := range rest {
		best, bestCore := -1, 0
		for _, core := range cell.cores {
			cl := sp.coreLoad(core)
			if cl >= c.core {
				continue
			}
			for _, cpu := range core {
				if sp.load[cpu] >= c.cpu {
					continue
				}
				if best < 0 || cl < bestCore || cl == bestCore && sp.load[cpu] < sp.load[best] {
					best, bestCore = cpu, cl
				}
			}
		}
		if best < 0 { // not reached: the flow left room for every queue
			best = qs[qi].kernel
		}
		qs[qi].cpu = best
		sp.load[best]++
	}
}
