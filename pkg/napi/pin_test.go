package napi

import (
	"errors"
	"runtime"
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"golang.org/x/sys/unix"
)

// TestPinOwnThread pins the test's own thread to the CPUs it already
// has, which changes nothing on the machine, and reads them back.
func TestPinOwnThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	before, err := Affinity(tid)
	if err != nil || before.IsEmpty() {
		t.Fatalf("Affinity(%d) = %v, %v", tid, before, err)
	}
	got, err := Pin(tid, before)
	if err != nil || !got.Equal(before) {
		t.Errorf("Pin(%d, %v) = %v, %v; want the same mask", tid, before, got, err)
	}
}

func TestPinErrors(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	// Beyond PID_MAX_LIMIT (4M): no such thread.
	if _, err := Pin(1<<30, cpumask.New(0)); !errors.Is(err, ErrThreadGone) || !errors.Is(err, unix.ESRCH) {
		t.Errorf("Pin of a missing pid: %v, want ErrThreadGone", err)
	}
	if _, err := Affinity(1 << 30); !errors.Is(err, ErrThreadGone) {
		t.Errorf("Affinity of a missing pid: %v, want ErrThreadGone", err)
	}
	// CPU 1000 fits a CPU set but is not online on a test machine:
	// EINVAL, and the thread's affinity is left as it was.
	before, _ := Affinity(tid)
	if _, err := Pin(tid, cpumask.New(1000)); !errors.Is(err, ErrNoOnlineCPU) {
		t.Errorf("Pin to an offline CPU: %v, want ErrNoOnlineCPU", err)
	}
	if after, _ := Affinity(tid); !after.Equal(before) {
		t.Errorf("affinity changed from %v to %v", before, after)
	}
	if _, err := Pin(tid, cpumask.Mask{}); !errors.Is(err, ErrNoOnlineCPU) {
		t.Errorf("Pin to no CPU: %v, want ErrNoOnlineCPU", err)
	}
	if _, err := Pin(tid, cpumask.New(5000)); err == nil {
		t.Error("Pin to CPU 5000: no error, want one (beyond a CPU set)")
	}
	if _, err := Pin(0, cpumask.New(0)); err == nil {
		t.Error("Pin of pid 0: no error, want one (0 would be the caller)")
	}
}
