package load

import (
	"math"
	"time"
)

// weight is the share of a new value over an interval of dt in an
// exponentially weighted moving average whose old values lose half
// their weight every halfLife: 1 - 2^(-dt/halfLife). Computing it from
// the actual interval makes the average the same whether two samples
// are 10 s apart or five are 2 s apart (the weights compose:
// (1-w1)(1-w2) = 2^(-(dt1+dt2)/halfLife)), so a late or a missed sample
// does not bend it.
func weight(dt, halfLife time.Duration) float64 {
	if dt <= 0 {
		return 0
	}
	// -expm1(-x ln 2) is 1-2^(-x) without losing the digits of a small
	// weight.
	return -math.Expm1(-float64(dt) / float64(halfLife) * math.Ln2)
}

// ewma is an exponentially weighted moving average and variance: four
// floats of memory, O(1) per sample. Its first value is taken as it is,
// so a new IRQ's average does not start from a zero it never had.
//
// vr is the exponentially weighted variance of the samples around the
// average, with the same weights (Finch, "Incremental calculation of
// weighted mean and variance", 2009, eq. 143): how far one interval's
// value typically strays from the average. It starts from 0, so until
// the weights of its values add up to 1 it reads low; kept is the
// weight the start still has (the product of 1-w), and spread divides
// it out. sq is the sum of the squared weights of the values in the
// average: with independent intervals the average's variance is the
// intervals' variance times sq (1 after one value, w/(2-w) in the long
// run: 0.07 for 2 s samples and a 10 s half-life).
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

// spread is the standard deviation of one interval's value around the
// average; 0 after one value.
func (e *ewma) spread() float64 {
	if e.kept >= 1 {
		return 0
	}
	return math.Sqrt(e.vr / (1 - e.kept))
}

// noise is the standard error of the average: spread times the root of
// the squared weights.
func (e *ewma) noise() float64 { return e.spread() * math.Sqrt(e.sq) }
