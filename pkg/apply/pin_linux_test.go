package apply

import (
	"errors"
	"runtime"
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/napi"
	"golang.org/x/sys/unix"
)

// affinity reads thread tid's CPUs.
func affinity(t *testing.T, tid int) cpumask.Mask {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &set); err != nil {
		t.Fatal(err)
	}
	var cpus []int
	for cpu := range len(set) * 64 {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpumask.New(cpus...)
}

// TestSetAffinityOwnThread pins the test's own thread to the CPUs it
// already has, which changes nothing on the machine, and reads them back.
func TestSetAffinityOwnThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	before := affinity(t, tid)
	got, err := setAffinity(tid, before)
	if err != nil || !got.Equal(before) {
		t.Errorf("setAffinity(%d, %v) = %v, %v; want the same mask", tid, before, got, err)
	}
}

func TestSetAffinityErrors(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	// Beyond PID_MAX_LIMIT (4M): no such thread.
	if _, err := setAffinity(1<<30, cpumask.New(0)); !errors.Is(err, napi.ErrThreadGone) || !errors.Is(err, unix.ESRCH) {
		t.Errorf("pin of a missing pid: %v, want ErrThreadGone", err)
	}
	// CPU 1000 fits a CPU set but is not online on a test machine:
	// EINVAL, and the thread's affinity is left as it was.
	before := affinity(t, tid)
	if _, err := setAffinity(tid, cpumask.New(1000)); !errors.Is(err, ErrNoOnlineCPU) {
		t.Errorf("pin to an offline CPU: %v, want ErrNoOnlineCPU", err)
	}
	if after := affinity(t, tid); !after.Equal(before) {
		t.Errorf("affinity changed from %v to %v", before, after)
	}
	if _, err := setAffinity(tid, cpumask.Mask{}); !errors.Is(err, ErrNoOnlineCPU) {
		t.Errorf("pin to no CPU: %v, want ErrNoOnlineCPU", err)
	}
	if _, err := setAffinity(tid, cpumask.New(5000)); err == nil {
		t.Error("pin to CPU 5000: no error, want one (beyond a CPU set)")
	}
	if _, err := setAffinity(0, cpumask.New(0)); err == nil {
		t.Error("pin of pid 0: no error, want one (0 would be the caller)")
	}
}
