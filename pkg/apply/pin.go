package apply

import (
	"errors"
	"fmt"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/napi"
	"github.com/numairqd/numairqd/pkg/topology"
	"golang.org/x/sys/unix"
)

var (
	// ErrNotHostProc: the roots are not the host's.
	ErrNotHostProc = errors.New("NAPI threads are pinned only at the host's /proc")
	// ErrNotThatThread: the pid no longer names the planned kthread.
	ErrNotThatThread = napi.ErrNotThatThread
	// ErrPinRestricted: the thread's cpuset left out some CPUs asked for.
	ErrPinRestricted = errors.New("the kernel kept only part of the mask")
	// ErrNoOnlineCPU: EINVAL, no CPU asked for is online and in the
	// thread's cpuset, or the thread is PF_NO_SETAFFINITY.
	ErrNoOnlineCPU = errors.New("no CPU of the mask is online")
	// ErrNotPermitted: EPERM, no CAP_SYS_NICE.
	ErrNotPermitted = errors.New("not permitted")
)

// PinThread sets the CPUs of NAPI kthread pid, named comm, with
// sched_setaffinity(2), only when Host is set and the pid is still that
// kthread (else ErrNotThatThread). The affinity read back must be mask
// on the online CPUs, else ErrPinRestricted. Other errors wrap
// napi.ErrThreadGone, ErrNoOnlineCPU or ErrNotPermitted and the errno.
func (w ProcWriter) PinThread(pid int, comm string, mask cpumask.Mask) error {
	if !w.Host {
		return fmt.Errorf("pin pid %d: %w (procfs root %s)", pid, ErrNotHostProc, w.Proc)
	}
	return w.pinThread(pid, comm, mask, setAffinity)
}

// pinThread is PinThread with set for setAffinity, for tests.
func (w ProcWriter) pinThread(pid int, comm string, mask cpumask.Mask, set func(int, cpumask.Mask) (cpumask.Mask, error)) error {
	if err := napi.CheckThread(w.Proc, pid, comm); err != nil {
		return err
	}
	got, err := set(pid, mask)
	if err != nil {
		return err
	}
	if got.Equal(mask) {
		return nil
	}
	online, err := topology.NewFS(w.Sys).Online()
	if err != nil {
		return fmt.Errorf("pin pid %d (%s) to %s: the kernel kept %s: %w", pid, comm, mask, got, err)
	}
	if want := mask.And(online); !got.Equal(want) {
		return fmt.Errorf("pin pid %d (%s) to %s: the kernel kept %s: %w", pid, comm, want, got, ErrPinRestricted)
	}
	return nil
}

// setAffinity sets thread pid's CPUs and returns those read back.
func setAffinity(pid int, cpus cpumask.Mask) (cpumask.Mask, error) {
	if pid <= 0 {
		return cpumask.Mask{}, fmt.Errorf("pin pid %d: not a pid", pid)
	}
	var set unix.CPUSet
	for cpu := range cpus.All() {
		if cpu >= len(set)*64 {
			return cpumask.Mask{}, fmt.Errorf("pin pid %d: CPU %d beyond the %d a CPU set holds", pid, cpu, len(set)*64)
		}
		set.Set(cpu)
	}
	if set.Count() == 0 {
		return cpumask.Mask{}, fmt.Errorf("pin pid %d: %w: empty mask", pid, ErrNoOnlineCPU)
	}
	if err := unix.SchedSetaffinity(pid, &set); err != nil {
		return cpumask.Mask{}, classifyPin("sched_setaffinity", pid, err)
	}
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return cpumask.Mask{}, classifyPin("sched_getaffinity", pid, err)
	}
	var got []int
	for cpu := range len(set) * 64 {
		if set.IsSet(cpu) {
			got = append(got, cpu)
		}
	}
	return cpumask.New(got...), nil
}

// classifyPin wraps errno from a sched_*affinity call on pid.
func classifyPin(op string, pid int, err error) error {
	var errno unix.Errno
	if errors.As(err, &errno) && pinErrs[errno] != nil {
		return fmt.Errorf("%s pid %d: %w: %w", op, pid, pinErrs[errno], err)
	}
	return fmt.Errorf("%s pid %d: %w", op, pid, err)
}

// pinErrs are the errors sched_*affinity's errnos mean.
var pinErrs = map[unix.Errno]error{
	unix.ESRCH:  napi.ErrThreadGone,
	unix.EINVAL: ErrNoOnlineCPU,
	unix.EPERM:  ErrNotPermitted,
}
