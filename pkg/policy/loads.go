package policy

import "github.com/numairqd/numairqd/pkg/cpumask"

// loads counts the queues given to each allowed CPU during one Compute,
// so that a CPU gets its (k+1)-th queue only when every allowed CPU has
// k: two 8-queue NICs on a 16-CPU node use 16 CPUs, not the first 8
// twice.
type loads struct {
	n     []int       // per CPU id; -1 for a CPU that is not allowed
	count map[int]int // load -> number of allowed CPUs with that load
	min   int         // lowest load of any allowed CPU
}

func newLoads(allowed cpumask.Mask) loads {
	l := loads{n: make([]int, allowed.Last()+1), count: map[int]int{0: allowed.Weight()}}
	for i := range l.n {
		if !allowed.Contains(i) {
			l.n[i] = -1
		}
	}
	return l
}

func (l *loads) get(cpu int) int {
	if cpu < 0 || cpu >= len(l.n) {
		return -1
	}
	return l.n[cpu]
}

// add gives cpu one more queue.
func (l *loads) add(cpu int) {
	v := l.get(cpu)
	if v < 0 {
		return
	}
	l.n[cpu]++
	l.count[v]--
	l.count[v+1]++
	if v == l.min && l.count[v] == 0 {
		l.min++
	}
}

// cursor walks one device's order picking, for each queue, the first CPU
// of the order among those with the lowest load. Loads only grow, so
// while the lowest load stays the same the walk only moves forward,
// which makes planning a device O(CPUs + queues) instead of their
// product.
type cursor struct {
	l     *loads
	order []int
	pos   int
	level int
}

func (l *loads) cursor(order []int) *cursor { return &cursor{l: l, order: order, level: l.min} }

func (c *cursor) next() int {
	if c.level != c.l.min {
		c.pos, c.level = 0, c.l.min
	}
	for ; c.pos < len(c.order); c.pos++ {
		if c.l.get(c.order[c.pos]) == c.level {
			return c.order[c.pos]
		}
	}
	// Every CPU of the order is above the global minimum (the order does
	// not cover every allowed CPU): take the least loaded of the order.
	best := c.order[0]
	for _, cpu := range c.order {
		if c.l.get(cpu) < c.l.get(best) {
			best = cpu
		}
	}
	return best
}
