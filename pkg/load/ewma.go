package load

import (
	"math"
	"time"
)

// weight is the share of a new value over an interval dt in an average
// whose old values lose half their weight every halfLife:
// 1 - 2^(-dt/halfLife), so a late or missed sample does not bend it.
func weight(dt, halfLife time.Duration) float64 {
	if dt <= 0 {
		return 0
	}
	// -expm1(-x ln 2) keeps the digits of a small weight.
	return -math.Expm1(-float64(dt) / float64(halfLife) * math.Ln2)
}

// ewma is an exponentially weighted moving average and variance whose
// first value is taken as is. vr is the values' weighted variance
// (Finch 2009, eq. 143), from 0, so spread divides out kept, the weight
// the start still has; sq sums the squared weights.
type ewma struct {
	v, vr, kept, sq float64
	ok              bool
}

func (e *ewma) add(x, w float64) {
	if !e.ok {
		e.v, e.vr, e.kept, e.sq, e.ok = x, 0, 1, 1, true
		return
	}
	d := x - e.v
	e.v += w * d
	e.vr = (1 - w) * (e.vr + w*d*d)
	e.kept *= 1 - w
	e.sq = (1-w)*(1-w)*e.sq + w*w
}

// spread is the standard deviation of one value; 0 after one value.
func (e *ewma) spread() float64 {
	if e.kept >= 1 {
		return 0
	}
	return math.Sqrt(e.vr / (1 - e.kept))
}

// noise is the standard error of the average.
func (e *ewma) noise() float64 { return e.spread() * math.Sqrt(e.sq) }
