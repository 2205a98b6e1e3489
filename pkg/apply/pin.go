package apply

import (
	"errors"
	"fmt"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/napi"
	"github.com/numairqd/numairqd/pkg/topology"
)

var (
	// ErrNotHostProc is PinThread's answer on a procfs root other than
	// /proc: a fixture tree's pids are not this machine's threads, and
	// sched_setaffinity would move whatever runs under them.
	ErrNotHostProc = errors.New("NAPI threads are pinned only at the host's /proc")
	// ErrNotThatThread: the pid no longer names the NAPI kthread planned
	// for (it exited and the pid was reused); nothing is pinned.
	ErrNotThatThread = napi.ErrNotThatThread
	// ErrPinRestricted: sched_setaffinity succeeded but the thread was
	// given fewer of the online CPUs asked for, as when its cpuset
	// (cgroup v2 isolated or root partitions) leaves some out.
	ErrPinRestricted = errors.New("the kernel kept only part of the mask")
)

// PinThread sets the CPUs of NAPI kthread pid, named comm, with
// sched_setaffinity(2) (napi.Pin), only when Proc is "/proc". Right
// before, it checks that the pid is still the kernel thread named comm
// (napi.CheckThread), else ErrNotThatThread; a pid reused since the plan was read is
// never pinned. The affinity read back must be mask on the online CPUs
// (Sys's devices/system/cpu/online), else ErrPinRestricted. Other
// errors wrap napi.ErrThreadGone (ESRCH), napi.ErrNoOnlineCPU (EINVAL)
// or napi.ErrNotPermitted (EPERM) and the errno.
func (w ProcWriter) PinThread(pid int, comm string, mask cpumask.Mask) error {
	if w.Proc != "/proc" {
		return fmt.Errorf("pin pid %d: %w (procfs root %s)", pid, ErrNotHostProc, w.Proc)
	}
	return w.pinThread(pid, comm, mask, napi.Pin)
}

// pinThread is PinThread with setAffinity for napi.Pin, so tests can
// run it on a fixture tree.
func (w ProcWriter) pinThread(pid int, comm string, mask cpumask.Mask, setAffinity func(int, cpumask.Mask) (cpumask.Mask, error)) error {
	if err := napi.CheckThread(w.Proc, pid, comm); err != nil {
		return err
	}
	got, err := setAffinity(pid, mask)
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
