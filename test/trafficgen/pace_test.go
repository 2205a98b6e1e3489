package main

import (
	"testing"
	"time"
)

func TestPacerBatch(t *testing.T) {
	for _, c := range []struct{ rate, batch, burst int64 }{
		{1, 1, 1}, {2000, 1, 20}, {2001, 2, 20}, {20000, 10, 200}, {200000, 100, 2000},
	} {
		p := newPacer(int(c.rate))
		if p.batch != c.batch || p.burst != c.burst {
			t.Errorf("rate %d: batch %d burst %d, want %d %d", c.rate, p.batch, p.burst, c.batch, c.burst)
		}
	}
}

// TestPacerSteady follows the send loop with a perfect clock: it wakes
// at wait(), and the frames granted are exactly rate*e.
func TestPacerSteady(t *testing.T) {
	for _, rate := range []int{1, 7, 2000, 20000, 200000} {
		p := newPacer(rate)
		var sent int64
		var e time.Duration
		wakeups := 0
		for e < 3*time.Second {
			n := p.take(e)
			if n < 0 || int64(n) > p.burst {
				t.Fatalf("rate %d at %v: take = %d", rate, e, n)
			}
			sent += int64(n)
			if want := int64(e) * int64(rate) / int64(time.Second); sent != want {
				t.Fatalf("rate %d at %v: %d sent, want %d", rate, e, sent, want)
			}
			w := p.wait(e)
			if w <= 0 {
				t.Fatalf("rate %d at %v: wait %v", rate, e, w)
			}
			// The next batch is due exactly then, not a nanosecond earlier.
			if p.allowed(e+w)-p.granted < p.batch || p.allowed(e+w-1)-p.granted >= p.batch {
				t.Fatalf("rate %d at %v: wait %v is not when %d more frames are due", rate, e, w, p.batch)
			}
			e += w
			wakeups++
		}
		if rate >= wakeupsPerSecond && (wakeups < 3*wakeupsPerSecond-3 || wakeups > 3*wakeupsPerSecond+3) {
			t.Errorf("rate %d: %d wake-ups in 3 s, want about %d", rate, wakeups, 3*wakeupsPerSecond)
		}
	}
}

// TestPacerStall checks that a late wake-up sends at most burst frames
// and that the total stays within rate*e.
func TestPacerStall(t *testing.T) {
	p := newPacer(20000)
	if n := p.take(time.Millisecond); n != 20 {
		t.Errorf("take(1ms) = %d, want 20", n)
	}
	if n := p.take(time.Second); n != 200 {
		t.Errorf("take after a 999 ms stall = %d, want the burst 200", n)
	}
	if n := p.take(time.Second); n != 0 {
		t.Errorf("take again at the same time = %d, want 0", n)
	}
	if n := p.take(time.Second + 5*time.Millisecond); n != 100 {
		t.Errorf("take 5 ms later = %d, want 100", n)
	}
	if n := p.take(10 * time.Minute); n != 200 {
		t.Errorf("take at 10 min = %d, want 200", n)
	}
}
