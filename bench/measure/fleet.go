package measure

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// FleetRun is what the fixture part of the bench (bench/fixtures_test.go)
// records: for each fleet shape of internal/fakesys, its machine, its
// devices' IRQs and where irqbalance and numairqd placed them.
// bench/report reads it from $BENCH_WORK/fixtures.json.
type FleetRun struct {
	Meta   FleetMeta    `json:"meta"`
	Shapes []FleetShape `json:"shapes"`
}

// FleetMeta describes a fixture run.
type FleetMeta struct {
	Date       string  `json:"date"`
	Command    string  `json:"command"`
	Commit     string  `json:"commit"`
	Go         string  `json:"go"`
	HostKernel string  `json:"host_kernel"`
	Irqbalance string  `json:"irqbalance"`
	WallS      float64 `json:"wall_s"`
}

// FleetShape is one shape's tree as built, and each placer's result on
// a copy of it.
type FleetShape struct {
	Name    string        `json:"name"`
	What    string        `json:"what"`
	Banned  string        `json:"banned"`
	Machine FleetMachine  `json:"machine"`
	Devices []FleetDevice `json:"devices"`
	Runs    []FleetPlacer `json:"runs"`
	BuildS  float64       `json:"build_s"`
}

// FleetMachine is the CPU and NUMA part of a shape's sysfs.
type FleetMachine struct {
	Online   []int            `json:"online"`
	Isolated string           `json:"isolated"`
	NohzFull string           `json:"nohz_full"`
	Nodes    []guestinfo.Node `json:"nodes"`
	CPUs     []FleetCPU       `json:"cpus"`
}

// FleetCPU places one online CPU in its core and last-level cache, each
// named by its lowest CPU id (core_cpus_list or thread_siblings_list,
// cache/index3/shared_cpu_list). Core is the CPU itself when sysfs has
// no SMT files, LLC -1 when it has no cache/index3.
type FleetCPU struct {
	ID   int `json:"id"`
	Core int `json:"core"`
	LLC  int `json:"llc"`
}

// FleetDevice is one PCI device with MSI IRQs.
type FleetDevice struct {
	PCI    string     `json:"pci"`
	Driver string     `json:"driver"`
	Node   int        `json:"node"`
	IRQs   []FleetIRQ `json:"irqs"`
}

// FleetIRQ is one IRQ of a FleetDevice as the tree was built: its
// /proc/interrupts name, whether its smp_affinity is read-only (a
// managed IRQ) and its smp_affinity_list.
type FleetIRQ struct {
	IRQ     int    `json:"irq"`
	Name    string `json:"name"`
	Managed bool   `json:"managed"`
	Start   string `json:"start"`
}

// FleetPlacer is one placer's run on its own copy of a shape's tree.
type FleetPlacer struct {
	Placer string `json:"placer"` // "irqbalance" or "numairqd"
	// Affinity is every device IRQ's CPU list after the run: what
	// irqbalance wrote to smp_affinity (or the file as it was), what
	// numairqd's plan says (its current list where it leaves an IRQ
	// alone or does not list it).
	Affinity map[int]string `json:"affinity"`
	Seconds  float64        `json:"seconds"`
	Exit     int            `json:"exit"`
	Err      string         `json:"err,omitempty"`
	// LogTail is the end of the placer's output; the whole of it is in
	// a file beside fixtures.json.
	LogTail string `json:"log_tail,omitempty"`
	// NotPlanned counts the device IRQs that are not managed and that
	// numairqd's plan does not list or leaves alone (planned "").
	NotPlanned int `json:"not_planned,omitempty"`
}

// Run returns the run of placer, if the shape has one.
func (s FleetShape) Run(placer string) (FleetPlacer, bool) {
	for _, r := range s.Runs {
		if r.Placer == placer {
			return r, true
		}
	}
	return FleetPlacer{}, false
}

// fleetQueueRe are the queue IRQ names of the corpus's drivers, with
// the number the driver gives its first data queue (base) and how far
// apart it numbers consecutive queues (step): mlx5's completion EQs,
// hns3's TxRx vectors (counted by two), the "<netdev>-TxRx-K" family
// (ice, i40e, ixgbe, bnxt_en; ENA's Tx-Rx; separate rx-K and tx-K
// vectors), MANA, mlx4 (EQ 0 is the async one), NVMe (q0 is the admin
// queue), virtio-net and virtio-blk. A name none of them matches is a
// control IRQ.
var fleetQueueRe = []struct {
	re         *regexp.Regexp
	base, step int
}{
	{regexp.MustCompile(`^mlx5_(?:sf_)?comp(\d+)@`), 0, 1},
	{regexp.MustCompile(`^hns3-.*-TxRx-(\d+)$`), 0, 2},
	{regexp.MustCompile(`-(?:TxRx|Tx-Rx|txrx|rxtx|rx|tx)-(\d+)$`), 0, 1},
	{regexp.MustCompile(`^mana_q(\d+)@`), 0, 1},
	{regexp.MustCompile(`^mlx4-(\d+)@`), 1, 1},
	{regexp.MustCompile(`^nvme\d+q(\d+)$`), 1, 1},
	{regexp.MustCompile(`^virtio\d+-(?:input|output|req)\.(\d+)$`), 0, 1},
}

// FleetQueue returns the queue index an IRQ name gives (from 0), and
// false for a control IRQ (mlx5_async0, ice's misc, nvme0q0, a
// virtio config vector) or a name it does not know.
func FleetQueue(name string) (int, bool) {
	for _, q := range fleetQueueRe {
		if m := q.re.FindStringSubmatch(name); m != nil {
			k, err := strconv.Atoi(m[1])
			if err != nil || k < q.base || (k-q.base)%q.step != 0 {
				return 0, false
			}
			return (k - q.base) / q.step, true
		}
	}
	return 0, false
}

// FleetFigures is one placer's placement of a shape's queue IRQs: the
// recognised, non-managed ones (managed IRQs stay where the kernel put
// them under every placer).
//
// An IRQ whose mask holds w CPUs counts as 1/w of an IRQ on each of
// them (and so on their cores and LLCs); its distance is the mean over
// its CPUs, its worst distance that of its farthest CPU.
type FleetFigures struct {
	Queues int // queue IRQs counted
	// MeanDist and WorstDist are the NUMA distance from the device's
	// node to the IRQ's CPU, over the devices that have a node; NaN
	// when none has.
	MeanDist, WorstDist float64
	// MaxPerCPU, MaxPerCore and MaxPerLLC are the most queue IRQs on
	// one CPU, one core (SMT siblings) and one last-level cache; NaN
	// when there is none to count (MaxPerLLC: no cache/index3).
	MaxPerCPU, MaxPerCore, MaxPerLLC float64
	// Farther counts queue IRQs farther from their device's node than
	// the drivers' spread puts them (the spread itself: 0).
	Farther int
	// MultiCPU counts queue IRQs whose mask holds more than one CPU;
	// OnExcluded those with a CPU that is banned, isolated or nohz_full;
	// Missing those with no mask to read.
	MultiCPU, OnExcluded, Missing int
	// NoNode counts queue IRQs of devices with no NUMA node (left out
	// of the distances).
	NoNode int
}

// Excluded is what no placer should use: the shape's banned CPUs, its
// isolated CPUs and its nohz_full CPUs.
func (s FleetShape) Excluded() (cpumask.Mask, error) {
	banned, err := cpumask.ParseList(s.Banned)
	if s.Banned != "" && err != nil {
		return cpumask.Mask{}, fmt.Errorf("shape %s: banned %q: %w", s.Name, s.Banned, err)
	}
	t := s.Topo()
	return banned.Or(t.Isolated), nil
}

// Topo is the NUMA view of the shape's machine.
func (s FleetShape) Topo() Topo {
	return TopoOf(guestinfo.State{Online: s.Machine.Online, Nodes: s.Machine.Nodes,
		Isolated: s.Machine.Isolated, NohzFull: s.Machine.NohzFull})
}

// HopOrder is the order in which the kernel hands out CPUs of allowed
// to the queues of a device on node, as cpumask_local_spread() walks
// the hop masks (sched_numa_find_nth_cpu()): by distance from the node,
// then by CPU id. A node without CPUs is replaced first by the nearest
// node that has some (numa_nearest_node(node, N_CPU), lowest id on a
// tie); node -1 gives allowed in id order.
func (t Topo) HopOrder(node int, allowed cpumask.Mask) []int {
	if node < 0 {
		return allowed.CPUs()
	}
	from := node
	if !t.hasCPUs(node) {
		best := -1
		for _, n := range t.Nodes {
			if !t.hasCPUs(n.ID) {
				continue
			}
			if d := t.Dist(node, n.ID); d >= 0 && (best < 0 || d < t.Dist(node, best) || (d == t.Dist(node, best) && n.ID < best)) {
				best = n.ID
			}
		}
		if best < 0 {
			return allowed.CPUs()
		}
		from = best
	}
	return t.Spread(from, allowed)
}

// hasCPUs says whether node has an online CPU.
func (t Topo) hasCPUs(node int) bool {
	for _, n := range t.Nodes {
		if n.ID == node {
			for _, c := range n.CPUs {
				if t.Online.Contains(c) {
					return true
				}
			}
		}
	}
	return false
}

// DriverSpread is where the drivers themselves put each queue IRQ of
// the shape: queue k of a device on the k-th CPU of its node's hop
// order over the allowed CPUs (online less Excluded), wrapping, as
// cpumask_local_spread(k, node) does; every device starts afresh, as
// each driver does. Control and managed IRQs are left out.
func (s FleetShape) DriverSpread() (map[int]cpumask.Mask, error) {
	excluded, err := s.Excluded()
	if err != nil {
		return nil, err
	}
	t := s.Topo()
	allowed := t.Online.AndNot(excluded)
	out := map[int]cpumask.Mask{}
	for _, d := range s.Devices {
		order := t.HopOrder(d.Node, allowed)
		if len(order) == 0 {
			continue
		}
		for _, irq := range d.IRQs {
			if k, ok := FleetQueue(irq.Name); ok && !irq.Managed {
				out[irq.IRQ] = cpumask.New(order[k%len(order)])
			}
		}
	}
	return out, nil
}

// Placement returns where placer put each IRQ: "drivers" is
// DriverSpread, any other name its recorded run.
func (s FleetShape) Placement(placer string) (map[int]cpumask.Mask, error) {
	if placer == "drivers" {
		return s.DriverSpread()
	}
	r, ok := s.Run(placer)
	if !ok {
		return nil, fmt.Errorf("shape %s: no %s run", s.Name, placer)
	}
	if r.Err != "" {
		return nil, fmt.Errorf("shape %s: %s: %s", s.Name, placer, r.Err)
	}
	out := map[int]cpumask.Mask{}
	for irq, l := range r.Affinity {
		m, err := cpumask.ParseList(l)
		if err != nil || m.IsEmpty() {
			continue
		}
		out[irq] = m
	}
	return out, nil
}

// Figures measures placer's placement of the shape's queue IRQs.
func (s FleetShape) Figures(placer string) (FleetFigures, error) {
	place, err := s.Placement(placer)
	if err != nil {
		return FleetFigures{}, err
	}
	ref, err := s.DriverSpread()
	if err != nil {
		return FleetFigures{}, err
	}
	excluded, _ := s.Excluded()
	t := s.Topo()
	core, llc := map[int]int{}, map[int]int{}
	for _, c := range s.Machine.CPUs {
		core[c.ID], llc[c.ID] = c.Core, c.LLC
	}
	f := FleetFigures{MeanDist: math.NaN(), WorstDist: math.NaN()}
	perCPU, perCore, perLLC := map[int]float64{}, map[int]float64{}, map[int]float64{}
	var sum float64
	nDist := 0
	for _, d := range s.Devices {
		for _, irq := range d.IRQs {
			if _, ok := FleetQueue(irq.Name); !ok || irq.Managed {
				continue
			}
			m, ok := place[irq.IRQ]
			if !ok {
				f.Missing++
				continue
			}
			f.Queues++
			w := float64(m.Weight())
			if m.Weight() > 1 {
				f.MultiCPU++
			}
			if m.Intersects(excluded) {
				f.OnExcluded++
			}
			dist, worst := 0.0, -1
			for c := range m.All() {
				perCPU[c] += 1 / w
				if k, ok := core[c]; ok && k >= 0 {
					perCore[k] += 1 / w
				}
				if k, ok := llc[c]; ok && k >= 0 {
					perLLC[k] += 1 / w
				}
				dc := t.CPUDist(d.Node, c)
				dist += float64(dc) / w
				worst = max(worst, dc)
			}
			if d.Node < 0 {
				f.NoNode++
				continue
			}
			sum += dist
			nDist++
			if math.IsNaN(f.WorstDist) || float64(worst) > f.WorstDist {
				f.WorstDist = float64(worst)
			}
			if r, ok := ref[irq.IRQ]; ok && dist > float64(t.CPUDist(d.Node, r.First()))+1e-9 {
				f.Farther++
			}
		}
	}
	if nDist > 0 {
		f.MeanDist = sum / float64(nDist)
	}
	f.MaxPerCPU, f.MaxPerCore, f.MaxPerLLC = maxValue(perCPU), maxValue(perCore), maxValue(perLLC)
	return f, nil
}

// maxValue is the largest value of m; NaN for an empty map (no queue
// IRQ, or a machine whose sysfs has no such level).
func maxValue(m map[int]float64) float64 {
	out := math.NaN()
	for _, v := range m {
		if math.IsNaN(out) || v > out {
			out = v
		}
	}
	return out
}
