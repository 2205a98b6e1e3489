package policy

import (
	"fmt"
	"slices"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// put plans q on m unless m asks for a CPU with no free vector
// (Plan.Full) that q is not on already, like irqbalance marking a CPU
// full on ENOSPC: a mask of several CPUs loses the full ones; a single
// CPU, or a mask with none left, moves to the next CPU of the device's
// order (wrapping) that is not full. It returns the note to add to q's
// reason; ok is false when every CPU of the order is full, and q is
// then left alone with NoCPU and its Reason set.
func (pl *planner) put(d *Device, q *IRQ, m cpumask.Mask) (note string, ok bool) {
	q.Planned = m
	if m.Equal(q.Current) || !m.Intersects(pl.full) {
		return "", true
	}
	full := m.And(pl.full)
	if left := m.AndNot(pl.full); !left.IsEmpty() {
		q.Planned = left
		return "; " + noVector(full) + ", left out", true
	}
	n := len(d.Order)
	from := slices.Index(d.Order, m.First())
	for k := 1; k <= n; k++ {
		if c := d.Order[(from+k)%n]; !pl.full.Contains(c) {
			q.Planned = cpumask.New(c)
			return "; " + noVector(full) + ", next CPU of the order", true
		}
	}
	q.Planned, q.NoCPU = cpumask.Mask{}, true
	q.Reason = fmt.Sprintf("no allowed CPU has a free vector (full: %s)", pl.full)
	return "", false
}

// noVector says that the CPUs of m have no free vector.
func noVector(m cpumask.Mask) string {
	if m.Weight() == 1 {
		return fmt.Sprintf("CPU %s has no free vector", m)
	}
	return fmt.Sprintf("CPUs %s have no free vector", m)
}
