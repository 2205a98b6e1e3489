package apply

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"syscall"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/napi"
	"github.com/numairqd/numairqd/pkg/policy"
)

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
// if inv lists it under the same pid and name (with inv nil, none: a pid
// alone may be another task's by now). Those restored, gone or refusing
// are forgotten.
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
