package measure

import (
	"math"
	"slices"
)

// Summary is the median, minimum and maximum of some values.
type Summary struct {
	N                int
	Median, Min, Max float64
}

// Summarize summarises xs; NaN values are left out.
func Summarize(xs []float64) Summary {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	s := Summary{N: len(v), Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	if len(v) == 0 {
		return s
	}
	slices.Sort(v)
	s.Min, s.Max = v[0], v[len(v)-1]
	if n := len(v); n%2 == 1 {
		s.Median = v[n/2]
	} else {
		s.Median = (v[n/2-1] + v[n/2]) / 2
	}
	return s
}
