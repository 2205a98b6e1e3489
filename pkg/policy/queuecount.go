package policy

import "github.com/numairqd/numairqd/pkg/cpumask"

// queueCounts counts the queues given to each allowed CPU during one
// Compute, so that a CPU gets its (k+1)-th queue only when every
// allowed CPU has k: two 8-queue NICs on a 16-CPU node use 16 CPUs.
type queueCounts struct {
	n     []int       // per CPU id; -1 for a CPU that is not allowed
	count map[int]int // queues -> number of allowed CPUs with that many
	min   int         // fewest queues of any allowed CPU
}

func newQueueCounts(allowed cpumask.Mask) queueCounts {
	qc := queueCounts{n: make([]int, allowed.Last()+1), count: map[int]int{0: allowed.Weight()}}
	for i := range qc.n {
		if !allowed.Contains(i) {
			qc.n[i] = -1
		}
	}
	return qc
}

func (qc *queueCounts) get(cpu int) int {
	if cpu < 0 || cpu >= len(qc.n) {
		return -1
	}
	return qc.n[cpu]
}

// add gives cpu one more queue.
func (qc *queueCounts) add(cpu int) {
	v := qc.get(cpu)
	if v < 0 {
		return
	}
	qc.n[cpu]++
	qc.count[v]--
	qc.count[v+1]++
	if v == qc.min && qc.count[v] == 0 {
		qc.min++
	}
}

// cursor picks, for each queue, the first CPU of one device's order among
// those with the fewest queues. Counts only grow, so while the fewest
// stays the same the walk only moves forward: O(CPUs + queues).
type cursor struct {
	qc    *queueCounts
	order []int
	pos   int
	level int
}

func (c *cursor) next() int {
	if c.level != c.qc.min {
		c.pos, c.level = 0, c.qc.min
	}
	for ; c.pos < len(c.order); c.pos++ {
		if c.qc.get(c.order[c.pos]) == c.level {
			return c.order[c.pos]
		}
	}
	// Every CPU of the order is above the global minimum: take its least.
	best := c.order[0]
	for _, cpu := range c.order {
		if c.qc.get(cpu) < c.qc.get(best) {
			best = cpu
		}
	}
	return best
}
