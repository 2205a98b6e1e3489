package policy

import "github.com/numairqd/numairqd/pkg/cpumask"

// newCounts returns a count of queues per CPU id, 0 for each allowed
// CPU and -1 for the others.
func newCounts(allowed cpumask.Mask) []int {
	n := make([]int, allowed.Last()+1)
	for i := range n {
		if !allowed.Contains(i) {
			n[i] = -1
		}
	}
	return n
}
