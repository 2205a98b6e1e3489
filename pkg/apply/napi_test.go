package apply_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"syscall"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/napi"
	"github.com/numairqd/numairqd/pkg/policy"
)

// threadPinner is procfsLike that pins the tree's NAPI kthreads by
// rewriting their status, as sched_setaffinity changes what the kernel
// shows there.
type threadPinner struct{ procfsLike }

func (w threadPinner) PinThread(pid int, m cpumask.Mask) error {
	return fakesys.PinThread(w.Proc, pid, m)
}

// napiTree is machineTree with threaded NAPI on eth0 (4 pairs): its
// threads all on CPUs 0-7; rx[k], tx[k] are queue k's pids.
func napiTree(t *testing.T) (tree *fakesys.Tree, rx, tx []int) {
	tree = machineTree(t)
	threads, rx, tx := fakesys.VirtioNAPIThreads("eth0", 4, 8193, 600, cpumask.New(0, 1, 2, 3, 4, 5, 6, 7))
	tree.AddNAPIThreads("eth0", threads...)
	return tree, rx, tx
}

// napiPlanned is every planned thread of p as pid -> CPU list.
func napiPlanned(p *policy.Plan) map[int]string {
	out := map[int]string{}
	for _, d := range p.Devices {
		for _, th := range d.NAPIThreads {
			if !th.LeftAlone() {
				out[th.PID] = th.Planned.String()
			}
		}
	}
	return out
}

// TestApplyNAPIPinsAndRestores: the real readers, planner and a writer
// that pins fixture threads put each thread on its IRQ's CPUs, a second
// round finds them there, and Restore puts back what they had, except
// for a pid that now names another thread.
func TestApplyNAPIPinsAndRestores(t *testing.T) {
	tree, rx, _ := napiTree(t)
	a := apply.New(threadPinner{procfsLike{ProcWriter: apply.ProcWriter{Proc: tree.Proc(), Sys: tree.Sys()}}}, zap.NewNop(), apply.Options{})
	p := planTree(t, tree, config.Default())
	want := napiPlanned(p)
	if len(want) != 8 {
		t.Fatalf("planned threads %v, want eth0's 8", want)
	}
	r, _ := a.Apply(context.Background(), p, policy.Memory{})
	if r.NAPIWritten != 8 || r.NAPIByKind[apply.KindOK] != 8 || len(r.NAPIByKind) != 1 {
		t.Errorf("NAPI outcomes %v, %d written; want 8 ok", r.NAPIByKind, r.NAPIWritten)
	}
	for pid, list := range want {
		if got := tree.NAPIThreadAllowed(pid).String(); got != list {
			t.Errorf("pid %d on %s, want %s", pid, got, list)
		}
	}
	p2 := planTree(t, tree, config.Default())
	if r2, _ := a.Apply(context.Background(), p2, policy.Memory{}); len(r2.NAPIByKind) != 0 {
		t.Errorf("second round NAPI outcomes %v, want none", r2.NAPIByKind)
	}
	// RX 0's pid now names another thread: it is not restored.
	tree.WriteNAPIThread(fakesys.NAPIThread{PID: rx[0], Comm: "napi/eth1-8193", Allowed: cpumask.New(3)})
	_, inv := readAll(t, tree)
	res := a.Restore(context.Background(), inv)
	if res.NAPIWritten != 7 {
		t.Errorf("restored %d threads, want 7", res.NAPIWritten)
	}
	for pid := range want {
		wantList := "0-7"
		if pid == rx[0] {
			wantList = "3"
		}
		if got := tree.NAPIThreadAllowed(pid).String(); got != wantList {
			t.Errorf("after restore pid %d on %s, want %s", pid, got, wantList)
		}
	}
	if res := a.Restore(context.Background(), inv); res.NAPIWritten+len(res.NAPIByKind) != 0 {
		t.Errorf("a second Restore wrote again: %v", res.NAPIByKind)
	}
}

// Pin errors are classified: ESRCH vanished, EINVAL stale (and a
// rescan asked), EPERM refused, anything else error; none counts as an
// IRQ outcome.
func TestApplyNAPIClassifiesErrors(t *testing.T) {
	tree, rx, tx := napiTree(t)
	pinErr := func(errno syscall.Errno, kind error) error {
		return fmt.Errorf("napi: sched_setaffinity pid 1: %w: %w", kind, errno)
	}
	w := &fakeWriter{pin: map[int]error{
		rx[0]: pinErr(syscall.ESRCH, napi.ErrThreadGone),
		rx[1]: pinErr(syscall.EINVAL, napi.ErrNoOnlineCPU),
		rx[2]: pinErr(syscall.EPERM, napi.ErrNotPermitted),
		tx[0]: fmt.Errorf("napi: sched_setaffinity pid %d: %w", tx[0], syscall.EFAULT),
	}}
	core, logs := observer.New(zapcore.DebugLevel)
	a := apply.New(w, zap.New(core), apply.Options{})
	r, _ := a.Apply(context.Background(), planTree(t, tree, config.Default()), policy.Memory{})
	want := map[apply.Kind]int{apply.KindVanished: 1, apply.KindStale: 1, apply.KindRefused: 1, apply.KindError: 1, apply.KindOK: 4}
	if !maps.Equal(r.NAPIByKind, want) || r.NAPIWritten != 4 || !r.Stale {
		t.Errorf("NAPI outcomes %v, %d written, stale %t; want %v, 4, true", r.NAPIByKind, r.NAPIWritten, r.Stale, want)
	}
	if r.ByKind[apply.KindVanished]+r.ByKind[apply.KindRefused] != 0 || len(r.Failed) != 0 {
		t.Errorf("NAPI outcomes leaked into the IRQs': %v, failed %v", r.ByKind, r.Failed)
	}
	if n := logs.FilterMessage("cannot pin NAPI thread").Len(); n != 2 {
		t.Errorf("%d warnings, want 2 (refused, error)", n)
	}
	if got := apply.KindRefused.String(); got != "refused" {
		t.Errorf("KindRefused is %q", got)
	}
}

// A dry run pins nothing and logs each thread once while its plan holds.
func TestApplyNAPIDryRun(t *testing.T) {
	tree, _, _ := napiTree(t)
	w := &fakeWriter{}
	core, logs := observer.New(zapcore.InfoLevel)
	a := apply.New(w, zap.New(core), apply.Options{DryRun: true})
	for range 2 {
		r, _ := a.Apply(context.Background(), planTree(t, tree, config.Default()), policy.Memory{})
		if r.NAPIByKind[apply.KindDryRun] != 8 || r.NAPIWritten != 0 {
			t.Errorf("dry run NAPI outcomes %v", r.NAPIByKind)
		}
	}
	if len(w.pinCalls) != 0 {
		t.Errorf("a dry run pinned %v", w.pinCalls)
	}
	if n := logs.FilterMessage("dry run: would pin NAPI thread").Len(); n != 8 {
		t.Errorf("%d dry-run logs, want 8 (once per thread)", n)
	}
}

// ProcWriter pins only at the host's /proc: a fixture's pids are not
// this machine's threads.
func TestProcWriterPinThreadRefusesFixtureRoots(t *testing.T) {
	err := apply.ProcWriter{Proc: t.TempDir()}.PinThread(1, cpumask.New(0))
	if !errors.Is(err, apply.ErrNotHostProc) {
		t.Errorf("err = %v, want ErrNotHostProc", err)
	}
}
