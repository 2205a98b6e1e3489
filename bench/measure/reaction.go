package measure

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// Equal reports whether m and o hold the same names with the same lists.
func (m Map) Equal(o Map) bool { return maps.Equal(m, o) }

// UsedCPUs is the union of m's CPU lists.
func (m Map) UsedCPUs() cpumask.Mask {
	var b cpumask.Builder
	for _, l := range m {
		if c, err := cpumask.ParseList(l); err == nil {
			b.Or(c)
		}
	}
	return b.Mask()
}

// IrqbalanceSet is what the bench takes as irqbalance's own placement
// after an event: the CPUs its queue IRQs used before the event plus
// the CPUs the event brought online, restricted to the CPUs online
// after it. irqbalance re-places every IRQ after a CPU hotplug (a full
// rescan), so the bench asks for its set of CPUs back, not for each IRQ
// on its old CPU.
func IrqbalanceSet(pre Map, online, newCPUs []int) cpumask.Mask {
	return pre.UsedCPUs().Or(cpumask.New(newCPUs...)).And(cpumask.New(online...))
}

// Within reports whether m has every name of want and each of its lists
// is a non-empty subset of set.
func (m Map) Within(want Map, set cpumask.Mask) bool {
	for name := range want {
		l, ok := m[name]
		if !ok {
			return false
		}
		c, err := cpumask.ParseList(l)
		if err != nil || c.IsEmpty() || !c.IsSubsetOf(set) {
			return false
		}
	}
	return true
}

// Matches reports whether m holds plan's list for every name of plan.
func (m Map) Matches(plan Map) bool {
	if len(plan) == 0 {
		return false
	}
	for name, want := range plan {
		got, ok := m[name]
		if !ok {
			return false
		}
		a, err1 := cpumask.ParseList(got)
		b, err2 := cpumask.ParseList(want)
		if err1 != nil || err2 != nil || !a.Equal(b) {
			return false
		}
	}
	return true
}

// PlanMap extracts the planned lists of the virtio-net queue IRQs from
// `numairqd plan --format json` (its documented keys devices[].irqs[].name
// and planned).
func PlanMap(planJSON []byte) (Map, error) {
	var doc struct {
		Devices []struct {
			PCI  string `json:"pci"`
			IRQs []struct {
				Name    string `json:"name"`
				Planned string `json:"planned"`
			} `json:"irqs"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(planJSON, &doc); err != nil {
		return nil, fmt.Errorf("numairqd plan output: %w", err)
	}
	m := Map{}
	for _, d := range doc.Devices {
		for _, irq := range d.IRQs {
			if name, _, ok := QueueName(irq.Name); ok && irq.Planned != "" {
				m[name] = irq.Planned
			}
		}
	}
	return m, nil
}

// Reaction is how one daemon answered one event.
type Reaction struct {
	// FirstWriteS is when a queue IRQ's list first differed from the
	// baseline (the driver's rewrite), in seconds after the event; -1 if
	// it never did within the window.
	FirstWriteS float64
	// OwnS is when the daemon's own placement was back and stayed until
	// the end of the watch; -1 if not within the window.
	OwnS float64
	EndS float64
	// MatchesPlan (numairqd only) says whether the map the watch ended
	// on is what `numairqd plan` computed afterwards.
	MatchesPlan bool
}

// React finds both times in w; own says whether a map is the daemon's
// own placement. OwnS is the first sample from which own holds until
// the end of the watch, so a placement that is undone does not count.
func React(w Watch, own func(Map) bool) Reaction {
	r := Reaction{FirstWriteS: -1, OwnS: -1, EndS: w.EndS}
	for _, s := range w.Samples {
		if !s.Affinity.Equal(w.Baseline) {
			r.FirstWriteS = s.T
			break
		}
	}
	for i := len(w.Samples) - 1; i >= 0; i-- {
		if !own(w.Samples[i].Affinity) {
			break
		}
		r.OwnS = w.Samples[i].T
	}
	return r
}

// ReactIrqbalance applies IrqbalanceSet: every queue IRQ back within
// the CPUs irqbalance used before (adjusted for the CPU set), counted
// from irqbalance's first write after the event. Without a write it
// has reacted only if the driver left the map as it was.
func ReactIrqbalance(w Watch) Reaction {
	set := IrqbalanceSet(w.Pre, w.Online, w.NewCPUs)
	r := React(w, func(m Map) bool { return m.Within(w.Pre, set) })
	switch {
	case r.FirstWriteS < 0 && w.Baseline.Equal(w.Pre):
		r.OwnS = 0
	case r.FirstWriteS < 0:
		r.OwnS = -1
	case r.OwnS >= 0 && r.OwnS < r.FirstWriteS:
		r.OwnS = r.FirstWriteS
	}
	return r
}

// ReactNumairqd takes as numairqd's own placement the map it settled
// on: the last change before the watch went quiet (the agent stops 2 s
// after the map last changed), if that map is not the driver's
// baseline. MatchesPlan then compares it with `numairqd plan`'s output
// for the same CPU set; the two can differ if the running daemon and
// the planner disagree.
func ReactNumairqd(w Watch, plan Map) Reaction {
	n := len(w.Samples)
	if n == 0 {
		return Reaction{FirstWriteS: -1, OwnS: -1, EndS: w.EndS}
	}
	final := w.Samples[n-1].Affinity
	r := React(w, func(m Map) bool { return m.Equal(final) })
	r.MatchesPlan = final.Matches(plan)
	if w.Stop != "quiet" || (final.Equal(w.Baseline) && !r.MatchesPlan) {
		r.OwnS = -1
	}
	return r
}
