package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"syscall"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/napi"
	"github.com/numairqd/numairqd/pkg/policy"
)

// ErrNotHostProc is PinThread's answer on a procfs root other than
// /proc: a fixture tree's pids are not this machine's threads, and
// sched_setaffinity would move whatever runs under them.
var ErrNotHostProc = errors.New("NAPI threads are pinned only at the host's /proc")

// PinThread sets thread pid's CPU affinity with sched_setaffinity(2)
// (napi.Pin), only when Proc is "/proc". The kernel keeps the online
// CPUs of mask; errors wrap napi.ErrThreadGone (ESRCH),
// napi.ErrNoOnlineCPU (EINVAL) or napi.ErrNotPermitted (EPERM) and the
// errno.
func (w ProcWriter) PinThread(pid int, mask cpumask.Mask) error {
	if w.Proc != "/proc" {
		return fmt.Errorf("pin pid %d: %w (procfs root %s)", pid, ErrNotHostProc, w.Proc)
	}
	_, err := napi.Pin(pid, mask)
	return err
}

// classifyNAPI maps a pin error to its outcome kind: the thread gone
// (ESRCH) is KindVanished, no online CPU in the mask (EINVAL: the plan
// predates a CPU going offline) KindStale, a thread the daemon may not
// move (EPERM: no CAP_SYS_NICE, or PF_NO_SETAFFINITY) KindRefused.
func classifyNAPI(err error) Kind {
	switch {
	case err == nil:
		return KindOK
	case errors.Is(err, napi.ErrThreadGone), errors.Is(err, syscall.ESRCH):
		return KindVanished
	case errors.Is(err, napi.ErrNoOnlineCPU), errors.Is(err, syscall.EINVAL):
		return KindStale
	case errors.Is(err, napi.ErrNotPermitted), errors.Is(err, syscall.EPERM):
		return KindRefused
	default:
		return KindError
	}
}

// threadKey names a thread: its pid and name, so a later task that
// reuses the pid is never taken for it.
type threadKey struct {
	pid  int
	comm string
}

// applyNAPI pins one NAPI kthread, or logs it in a dry run.
func (a *Applier) applyNAPI(w policy.Write, res *Result) {
	k := threadKey{w.PID, w.Name}
	warnKey := "napi " + strconv.Itoa(w.PID) + " " + w.Name
	fields := []zap.Field{zap.String("interface", w.Interface), zap.Int("pid", w.PID), zap.String("name", w.Name),
		zap.Int("queue", w.Queue), zap.Int("irq", w.IRQ), zap.Stringer("from", w.Before), zap.Stringer("to", w.After)}
	if a.opts.DryRun {
		res.record(w, KindDryRun, "")
		if last, ok := a.wouldNAPI[k]; !ok || !last.Equal(w.After) {
			if a.wouldNAPI == nil {
				a.wouldNAPI = map[threadKey]cpumask.Mask{}
			}
			a.wouldNAPI[k] = w.After
			a.log.Info("dry run: would pin NAPI thread", fields...)
		}
		return
	}
	err := a.w.PinThread(w.PID, w.After)
	if a.opts.Progress != nil {
		a.opts.Progress()
	}
	kind := classifyNAPI(err)
	res.record(w, kind, errnoName(err))
	switch kind {
	case KindOK:
		a.settled(warnKey)
		if a.napiOriginals == nil {
			a.napiOriginals = map[threadKey]cpumask.Mask{}
		}
		if _, ok := a.napiOriginals[k]; !ok {
			a.napiOriginals[k] = w.Before
		}
		a.log.Debug("pinned NAPI thread", fields...)
	case KindVanished:
		a.log.Debug("NAPI thread exited before it was pinned", fields...)
	case KindStale:
		a.log.Info("no CPU of the NAPI thread's mask is online; rescanning", append(fields, zap.Error(err))...)
	default:
		a.warnOnce(warnKey, errnoName(err), "cannot pin NAPI thread", append(fields, zap.Stringer("kind", kind), zap.String("errno", errnoName(err)), zap.Error(err))...)
	}
}

// restoreNAPI gives each NAPI kthread Apply pinned the CPUs it had
// before, when inv lists it under the same pid and name; with no
// inventory (nil) none is touched, as a pid alone may be another task's
// by now. Those restored, gone or refusing are forgotten.
func (a *Applier) restoreNAPI(ctx context.Context, inv *inventory.Inventory, res *Result) {
	listed := map[threadKey]inventory.NAPIThread{}
	if inv != nil {
		for _, d := range inv.Devices {
			for _, t := range d.NAPI.Threads {
				listed[threadKey{t.PID, t.Comm}] = t
			}
		}
	}
	keys := slices.SortedFunc(maps.Keys(a.napiOriginals), func(x, y threadKey) int {
		return cmp.Or(cmp.Compare(x.pid, y.pid), cmp.Compare(x.comm, y.comm))
	})
	written := 0
	for _, k := range keys {
		if ctx.Err() != nil {
			break
		}
		t, ok := listed[k]
		if !ok {
			delete(a.napiOriginals, k)
			continue
		}
		m := a.napiOriginals[k]
		w := policy.Write{Kind: policy.WriteNAPIThread, IRQ: -1, Name: k.comm, Interface: t.Interface, Queue: t.Queue, PID: k.pid,
			Before: t.Affinity, After: m}
		err := a.w.PinThread(k.pid, m)
		kind := classifyNAPI(err)
		res.record(w, kind, errnoName(err))
		switch kind {
		case KindOK:
			written++
			delete(a.napiOriginals, k)
		case KindVanished, KindRefused:
			delete(a.napiOriginals, k)
		default:
			a.log.Warn("cannot restore NAPI thread CPUs", zap.Int("pid", k.pid), zap.String("name", k.comm),
				zap.Stringer("mask", m), zap.Stringer("kind", kind), zap.Error(err))
		}
	}
	if written > 0 {
		a.log.Info("restored NAPI thread CPUs found at start", zap.Int("written", written))
	}
}
