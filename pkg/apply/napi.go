package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"syscall"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/napi"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
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

// PinThread sets the CPUs of NAPI kthread pid, named comm, only when
// Host is set and the pid is still that kthread (else ErrNotThatThread).
// A read-back affinity short of mask's online CPUs is ErrPinRestricted;
// errnos wrap napi.ErrThreadGone, ErrNoOnlineCPU or ErrNotPermitted.
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

// napiKinds sorts NAPI pin errors. None asks for a rescan: a cpuset is
// not in the snapshot, and a CPU going offline brings its own uevent.
var napiKinds = kindTable{
	{KindVanished, []error{napi.ErrThreadGone, syscall.ESRCH, ErrNotThatThread}},
	{KindRefused, []error{ErrPinRestricted, ErrNoOnlineCPU, syscall.EINVAL, ErrNotPermitted, syscall.EPERM}},
}

// napiErrno is errnoName, or "restricted" for ErrPinRestricted.
func napiErrno(err error) string {
	if errors.Is(err, ErrPinRestricted) {
		return "restricted"
	}
	return errnoName(err)
}

// threadKey names a thread by pid and name: a reused pid is another.
type threadKey struct {
	pid  int
	comm string
}

// napiWarnKey is a thread's key in warned.
func napiWarnKey(pid int, comm string) string { return "napi " + strconv.Itoa(pid) + " " + comm }

// applyNAPI pins one NAPI kthread, or logs it in a dry run.
func (a *Applier) applyNAPI(w policy.Write, res *Result) {
	k := threadKey{w.PID, w.Name}
	warnKey := napiWarnKey(w.PID, w.Name)
	fields := []zap.Field{zap.String("interface", w.Interface), zap.Int("pid", w.PID), zap.String("name", w.Name),
		zap.Int("queue", w.Queue), zap.Int("irq", w.IRQ), zap.Stringer("from", w.Before), zap.Stringer("to", w.After)}
	if a.opts.DryRun {
		dryRun(a, &a.wouldNAPI, k, w, res, "dry run: would pin NAPI thread", fields...)
		return
	}
	err := a.w.PinThread(w.PID, w.Name, w.After)
	if a.opts.Progress != nil {
		a.opts.Progress()
	}
	kind := napiKinds.of(err)
	errno := napiErrno(err)
	res.record(w, kind, errno)
	// A restricted pin moved the thread too: Restore puts it back.
	if kind == KindOK || errors.Is(err, ErrPinRestricted) {
		keepFirst(&a.napiOriginals, k, w.Before)
	}
	switch kind {
	case KindOK:
		a.settled(warnKey)
		a.log.Debug("pinned NAPI thread", fields...)
	case KindVanished:
		a.log.Debug("NAPI thread exited before it was pinned", append(fields, zap.Error(err))...)
	default:
		a.warnOnce(warnKey, errno, "cannot pin NAPI thread", append(fields, zap.Stringer("kind", kind), zap.String("errno", errno), zap.Error(err))...)
	}
}

// restoreNAPI gives each NAPI kthread Apply pinned its CPUs from before,
// if inv lists it under the same pid and name (inv nil: none).
func (a *Applier) restoreNAPI(ctx context.Context, inv *inventory.Inventory, res *Result) {
	listed := map[threadKey]inventory.NAPIThread{}
	if inv != nil {
		for _, d := range inv.Devices {
			for _, t := range d.NAPI.Threads {
				listed[threadKey{t.PID, t.Comm}] = t
			}
		}
	}
	byThread := func(x, y threadKey) int {
		return cmp.Or(cmp.Compare(x.pid, y.pid), cmp.Compare(x.comm, y.comm))
	}
	written := restoreAll(ctx, a.napiOriginals, byThread, func(k threadKey, m cpumask.Mask) (bool, bool) {
		t, ok := listed[k]
		if !ok {
			return false, true
		}
		w := policy.Write{Kind: policy.WriteNAPIThread, IRQ: -1, Name: k.comm, Interface: t.Interface, Queue: t.Queue, PID: k.pid,
			Before: t.Affinity, After: m}
		err := a.w.PinThread(k.pid, k.comm, m)
		kind := napiKinds.of(err)
		res.record(w, kind, napiErrno(err))
		if kind == KindOK || kind == KindVanished || kind == KindRefused {
			return kind == KindOK, true
		}
		a.log.Warn("cannot restore NAPI thread CPUs", zap.Int("pid", k.pid), zap.String("name", k.comm),
			zap.Stringer("mask", m), zap.Stringer("kind", kind), zap.Error(err))
		return false, false
	})
	if written > 0 {
		a.log.Info("restored NAPI thread CPUs found at start", zap.Int("written", written))
	}
}
