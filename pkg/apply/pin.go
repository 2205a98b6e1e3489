package apply

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

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
	ErrNotThatThread = errors.New("pid is no longer the NAPI kthread")
	// ErrPinRestricted: sched_setaffinity succeeded but the thread was
	// given fewer of the online CPUs asked for, as when its cpuset
	// (cgroup v2 isolated or root partitions) leaves some out.
	ErrPinRestricted = errors.New("the kernel kept only part of the mask")
)

// PinThread sets the CPUs of NAPI kthread pid, named comm, with
// sched_setaffinity(2) (napi.Pin), only when Proc is "/proc". Right
// before, it checks that the pid is still a child of kthreadd named
// comm, else ErrNotThatThread; a pid reused since the plan was read is
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
	if err := w.checkKthread(pid, comm); err != nil {
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

// checkKthread reads <Proc>/PID/status and returns ErrNotThatThread
// unless its Name is comm and its PPid kthreadd's (2), and
// napi.ErrThreadGone when the pid is gone.
func (w ProcWriter) checkKthread(pid int, comm string) error {
	path := filepath.Join(w.Proc, strconv.Itoa(pid), "status")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("read %s: %w: %w", path, napi.ErrThreadGone, err)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	var name, ppid []byte
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("Name:")); ok {
			name = bytes.TrimSpace(v)
		} else if v, ok := bytes.CutPrefix(line, []byte("PPid:")); ok {
			ppid = bytes.TrimSpace(v)
		}
	}
	if string(name) != comm || string(ppid) != "2" {
		return fmt.Errorf("%s: Name %q PPid %q, want %q and 2 (kthreadd): %w", path, name, ppid, comm, ErrNotThatThread)
	}
	return nil
}
