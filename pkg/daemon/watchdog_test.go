package daemon

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// slowWriter writes through fileWriter after a pause per IRQ, like a
// round of EBUSY retries, and can hang forever on one IRQ, like a
// daemon stuck in a call.
type slowWriter struct {
	*fileWriter
	pause   time.Duration
	hangOn  int
	hung    chan struct{} // closed when the hang starts
	release chan struct{} // ends the hang
	once    sync.Once
	onWrite func()
}

func (w *slowWriter) WriteAffinity(irq int, m cpumask.Mask) error {
	if irq == w.hangOn {
		w.once.Do(func() { close(w.hung) })
		<-w.release
	}
	time.Sleep(w.pause)
	if w.onWrite != nil {
		w.onWrite()
	}
	return w.fileWriter.WriteAffinity(irq, m)
}

// watchdogs counts the WATCHDOG=1 states r has seen.
func (r *recorder) watchdogs() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.states {
		if s == "WATCHDOG=1" {
			n++
		}
	}
	return n
}

// TestWatchdogFedDuringLongRounds: with WatchdogSec=400ms, a first
// round longer than the whole interval (13 writes of 80 ms each) keeps
// feeding the watchdog to its end, where the old loop fed it only
// between rounds; and a daemon hung in one write stops feeding it, so
// systemd can kill it.
func TestWatchdogFedDuringLongRounds(t *testing.T) {
	t.Setenv("WATCHDOG_USEC", "400000")
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	tree := fixture(t)
	w := &slowWriter{fileWriter: &fileWriter{proc: tree.Proc()}, pause: 80 * time.Millisecond, hangOn: -1}
	rec := newRecorder()
	// Feeds seen at each write: they must keep rising late in the round,
	// long after the beat of its start has aged out.
	var atWrite []int
	w.onWrite = func() { atWrite = append(atWrite, rec.watchdogs()) }
	d, err := New(Options{Sysfs: tree.Sys(), Procfs: tree.Proc(), Writer: w, Log: zap.NewNop(), Notify: rec})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	rec.waitFor(t, "READY=1")
	if n := len(atWrite); n < 10 || atWrite[n-1] <= atWrite[n/2] {
		t.Errorf("WATCHDOG=1 count at each of %d slow writes: %v; want it still rising in the round's second half", n, atWrite)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Hung: the startup round blocks in its first write for good.
	tree = fixture(t)
	w = &slowWriter{fileWriter: &fileWriter{proc: tree.Proc()}, hangOn: 25, hung: make(chan struct{}), release: make(chan struct{})}
	rec = newRecorder()
	if d, err = New(Options{Sysfs: tree.Sys(), Procfs: tree.Proc(), Writer: w, Log: zap.NewNop(), Notify: rec}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	go func() { done <- d.Run(ctx, nil) }()
	<-w.hung
	// Feeds decided before the hang may still land within half an
	// interval (200 ms); none after.
	time.Sleep(time.Second)
	before := rec.watchdogs()
	time.Sleep(time.Second)
	if after := rec.watchdogs(); after != before {
		t.Errorf("%d WATCHDOG=1 sent while the daemon hung in a write", after-before)
	}
	for _, s := range rec.snapshot() {
		if strings.HasPrefix(s, "READY=1") {
			t.Error("READY=1 although the first round never finished")
		}
	}
	close(w.release)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func (r *recorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.states...)
}
