package measure

import (
	"math"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// Figures is the placement quality of one device's queue IRQs in one
// state, from either smp_affinity_list or effective_affinity_list.
//
// An IRQ whose mask holds several CPUs counts as the mean of its CPUs'
// distances, and as 1/weight of an IRQ on each of its CPUs.
type Figures struct {
	IRQs int // queue IRQs counted
	// MeanDist is the mean NUMA distance from the device's node to the
	// queue IRQs' CPUs; NaN when the device has no node.
	MeanDist float64
	// IdealDist is the mean for the same IRQs with queue i on the i-th
	// allowed CPU of the spread order (wrapping): the lowest mean when
	// no CPU takes more than ceil(queues/allowed CPUs) queues.
	IdealDist float64
	// MaxPerCPU and MeanPerUsedCPU count queue IRQs per CPU; the mean
	// is over the CPUs that hold any.
	MaxPerCPU      float64
	MeanPerUsedCPU float64
	CPUsUsed       int
	// InSpread counts queue IRQs whose mask is exactly the (i mod n)-th
	// allowed CPU of the spread order, i their queue index; InLinear the
	// same in CPU id order (MANA's rule when queues outnumber CPUs).
	InSpread, InLinear int
	MultiCPU           int // queue IRQs with more than one CPU
	// OnBanned counts the device's IRQs (queues and control) with a CPU
	// in the banned list or isolated/nohz_full.
	OnBanned int
	Missing  int // queue IRQs with no readable mask
	PerCPU   map[int]float64
}

// Measure computes d's figures in state s, with banned CPUs excluded
// from the allowed set; effective selects effective_affinity_list.
func Measure(s guestinfo.State, d Device, banned cpumask.Mask, effective bool) Figures {
	t := TopoOf(s)
	excluded := banned.Or(t.Isolated)
	allowed := t.Online.AndNot(excluded)
	spread := t.Spread(d.Node, allowed)
	linear := allowed.CPUs()
	f := Figures{PerCPU: map[int]float64{}, MeanDist: math.NaN(), IdealDist: math.NaN()}
	var sumDist, sumIdeal float64
	nDist := 0
	mask := func(irq guestinfo.IRQ) (cpumask.Mask, bool) {
		l := irq.Affinity
		if effective {
			l = irq.Effective
		}
		m, err := cpumask.ParseList(l)
		if err != nil || m.IsEmpty() {
			return m, false
		}
		return m, true
	}
	for _, q := range d.Queues {
		m, ok := mask(q.IRQ)
		if !ok {
			f.Missing++
			continue
		}
		f.IRQs++
		w := float64(m.Weight())
		if m.Weight() > 1 {
			f.MultiCPU++
		}
		dist := 0.0
		for c := range m.All() {
			f.PerCPU[c] += 1 / w
			dist += float64(t.CPUDist(d.Node, c)) / w
		}
		if m.Intersects(excluded) {
			f.OnBanned++
		}
		if len(spread) > 0 && m.Equal(cpumask.New(spread[q.Queue%len(spread)])) {
			f.InSpread++
		}
		if len(linear) > 0 && m.Equal(cpumask.New(linear[q.Queue%len(linear)])) {
			f.InLinear++
		}
		if d.Node >= 0 && len(spread) > 0 {
			sumDist += dist
			sumIdeal += float64(t.CPUDist(d.Node, spread[q.Queue%len(spread)]))
			nDist++
		}
	}
	for _, irq := range d.Control {
		if m, ok := mask(irq); ok && m.Intersects(excluded) {
			f.OnBanned++
		}
	}
	if nDist > 0 {
		f.MeanDist = sumDist / float64(nDist)
		f.IdealDist = sumIdeal / float64(nDist)
	}
	var total float64
	for _, n := range f.PerCPU {
		if n > 0 {
			f.CPUsUsed++
			total += n
			f.MaxPerCPU = math.Max(f.MaxPerCPU, n)
		}
	}
	if f.CPUsUsed > 0 {
		f.MeanPerUsedCPU = total / float64(f.CPUsUsed)
	}
	return f
}
