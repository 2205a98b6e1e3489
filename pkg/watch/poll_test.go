package watch

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestPollSeesAChangeWithinAnInterval, in fake time: an answer that
// differs from the last calls changed once by the next tick, a steady
// one never, a change before the loop starts is seen, and the loop
// stops with its context.
func TestPollSeesAChangeWithinAnInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var answer atomic.Value
		answer.Store("")
		var reads, changes atomic.Int32
		read := func() string { reads.Add(1); return answer.Load().(string) }
		ctx, cancel := context.WithCancel(t.Context())
		loop := Poll(ctx, time.Second, read, func() { changes.Add(1) })
		answer.Store("6-7") // between the first read and the loop
		done := make(chan struct{})
		go func() { loop(); close(done) }()

		time.Sleep(time.Second)
		synctest.Wait()
		if n := changes.Load(); n != 1 {
			t.Fatalf("%d changes one interval after 6-7 was made, want 1", n)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := changes.Load(); n != 1 {
			t.Errorf("%d changes while the answer stayed, want 1", n)
		}
		if n := reads.Load(); n != 7 {
			t.Errorf("%d reads in 6 intervals, want 7 (one a second and the first)", n)
		}
		answer.Store("")
		time.Sleep(time.Second)
		synctest.Wait()
		if n := changes.Load(); n != 2 {
			t.Errorf("%d changes after the partition went, want 2", n)
		}
		cancel()
		<-done
	})
}
