package policy

import (
	"fmt"
	"slices"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// put plans q on m, but like irqbalance after ENOSPC on no full CPU
// (Plan.Full) that q is not on already: a mask loses its full CPUs, and
// one with none left moves on along the device's order. It returns the
// note for q's reason; ok is false, q left alone with NoCPU, when every
// CPU of the order is full.
func (pl *planner) put(d *Device, q *IRQ, m cpumask.Mask) (note string, ok bool) {
	q.Planned = m
	if m.Equal(q.Current) || !m.Intersects(pl.full) {
		return "", true
	}
	full := m.And(pl.full)
	note = fmt.Sprintf("; CPUs %s have no free vector", full)
	if full.Weight() == 1 {
		note = fmt.Sprintf("; CPU %s has no free vector", full)
	}
	if left := m.AndNot(pl.full); !left.IsEmpty() {
		q.Planned = left
		return note + ", left out", true
	}
	n := len(d.Order)
	from := slices.Index(d.Order, m.First())
	for k := 1; k <= n; k++ {
		if c := d.Order[(from+k)%n]; !pl.full.Contains(c) {
			q.Planned = cpumask.New(c)
			return note + ", next CPU of the order", true
		}
	}
	q.Planned, q.NoCPU = cpumask.Mask{}, true
	q.Reason = fmt.Sprintf("no allowed CPU has a free vector (full: %s)", pl.full)
	return "", false
}
