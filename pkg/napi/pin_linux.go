package napi

import (
	"errors"
	"fmt"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"golang.org/x/sys/unix"
)

var (
	// ErrThreadGone: the thread exited (ESRCH), as after its device was
	// removed or its NAPI deleted; rediscover.
	ErrThreadGone = errors.New("thread gone")
	// ErrNoOnlineCPU: EINVAL from sched_setaffinity, which means none
	// of the CPUs asked for is online and in the thread's cpuset, or a
	// thread no one may move (PF_NO_SETAFFINITY).
	ErrNoOnlineCPU = errors.New("no CPU of the mask is online")
	// ErrNotPermitted: the caller may not move the thread (EPERM: no
	// CAP_SYS_NICE).
	ErrNotPermitted = errors.New("not permitted")
)

// Pin sets the CPU affinity of thread pid to cpus with
// sched_setaffinity(2) and returns the affinity read back, which is
// cpus minus what the kernel would not give (CPUs offline or outside
// the thread's cpuset). Errors wrap ErrThreadGone, ErrNoOnlineCPU or
// ErrNotPermitted and the errno.
func Pin(pid int, cpus cpumask.Mask) (cpumask.Mask, error) {
	if pid <= 0 {
		return cpumask.Mask{}, fmt.Errorf("napi: pin pid %d: not a pid", pid)
	}
	var set unix.CPUSet
	for cpu := range cpus.All() {
		if cpu >= len(set)*64 {
			return cpumask.Mask{}, fmt.Errorf("napi: pin pid %d: CPU %d beyond the %d a CPU set holds", pid, cpu, len(set)*64)
		}
		set.Set(cpu)
	}
	if set.Count() == 0 {
		return cpumask.Mask{}, fmt.Errorf("napi: pin pid %d: %w: empty mask", pid, ErrNoOnlineCPU)
	}
	if err := unix.SchedSetaffinity(pid, &set); err != nil {
		return cpumask.Mask{}, classify("sched_setaffinity", pid, err)
	}
	return Affinity(pid)
}

// Affinity reads the CPU affinity of thread pid with
// sched_getaffinity(2); errors are classified as Pin's.
func Affinity(pid int) (cpumask.Mask, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return cpumask.Mask{}, classify("sched_getaffinity", pid, err)
	}
	var cpus []int
	for cpu := 0; cpu < len(set)*64; cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpumask.New(cpus...), nil
}

// classify wraps errno from a sched_*affinity call on pid.
func classify(op string, pid int, err error) error {
	var kind error
	switch {
	case errors.Is(err, unix.ESRCH):
		kind = ErrThreadGone
	case errors.Is(err, unix.EINVAL):
		kind = ErrNoOnlineCPU
	case errors.Is(err, unix.EPERM):
		kind = ErrNotPermitted
	default:
		return fmt.Errorf("napi: %s pid %d: %w", op, pid, err)
	}
	return fmt.Errorf("napi: %s pid %d: %w: %w", op, pid, kind, err)
}
