package apply

import "github.com/numairqd/numairqd/pkg/cpumask"

// noteChanged records m as the last mask of k in *last and reports
// whether it differs from the one before: a dry run logs a would-be
// write once until it changes.
func noteChanged[K comparable](last *map[K]cpumask.Mask, k K, m cpumask.Mask) bool {
	if prev, ok := (*last)[k]; ok && prev.Equal(m) {
		return false
	}
	if *last == nil {
		*last = map[K]cpumask.Mask{}
	}
	(*last)[k] = m
	return true
}

// keepFirst records m as k's original in *originals unless one is kept:
// Restore puts back what was there before numairqd's first write.
func keepFirst[K comparable](originals *map[K]cpumask.Mask, k K, m cpumask.Mask) {
	if *originals == nil {
		*originals = map[K]cpumask.Mask{}
	}
	if _, ok := (*originals)[k]; !ok {
		(*originals)[k] = m
	}
}
