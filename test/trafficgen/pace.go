package main

import "time"

// pacer is a token bucket filled at rate frames/s. At any elapsed time
// e, the frames it has granted never exceed rate*e: the offered rate is
// bounded from the first frame on. A stall (the sender was not
// scheduled) grants at most burst frames at once; the rest of the
// backlog is forgotten rather than sent in a rush.
type pacer struct {
	rate    int64 // frames per second
	batch   int64 // frames per wake-up
	burst   int64 // most frames granted at once
	granted int64 // frames granted or forgotten so far
}

// wakeups per second: every 0.5 ms is well within what time.Sleep
// keeps on Linux and makes each batch small.
const wakeupsPerSecond = 2000

func newPacer(rate int) *pacer {
	p := &pacer{rate: int64(rate)}
	p.batch = max(1, (p.rate+wakeupsPerSecond-1)/wakeupsPerSecond)
	p.burst = max(p.batch, p.rate/100) // 10 ms of frames
	return p
}

// take returns how many frames may be sent at elapsed time e.
func (p *pacer) take(e time.Duration) int {
	allowed := p.allowed(e)
	if allowed-p.granted > p.burst {
		p.granted = allowed - p.burst
	}
	n := allowed - p.granted
	p.granted = allowed
	return int(n)
}

// allowed is rate*e in whole frames. rate <= 200000 and e <= 15 min
// keep the product far below 2^63 ns·frames/s.
func (p *pacer) allowed(e time.Duration) int64 {
	return int64(e) * p.rate / int64(time.Second)
}

// wait returns how long after elapsed time e the next batch is due.
func (p *pacer) wait(e time.Duration) time.Duration {
	due := time.Duration(((p.granted+p.batch)*int64(time.Second) + p.rate - 1) / p.rate)
	return max(0, due-e)
}
