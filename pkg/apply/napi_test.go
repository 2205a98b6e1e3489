package apply_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"syscall"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/internal/fakesys/fakeplan"
	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/napi"
	"github.com/numairqd/numairqd/pkg/policy"
)

// threadPinner is procfsLike that pins the tree's NAPI kthreads as
// ProcWriter does, checking the pid is still the thread, with a
// sched_setaffinity that rewrites their status, as the kernel changes
// what it shows there, and keeps the whole mask.
type threadPinner struct{ procfsLike }

func (w threadPinner) PinThread(pid int, comm string, m cpumask.Mask) error {
	return w.PinThreadWith(pid, comm, m, func(pid int, m cpumask.Mask) (cpumask.Mask, error) {
		return m, fakesys.PinThread(w.Proc, pid, m)
	})
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
	p := fakeplan.Plan(t, tree, config.Default())
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
	p2 := fakeplan.Plan(t, tree, config.Default())
	if r2, _ := a.Apply(context.Background(), p2, policy.Memory{}); len(r2.NAPIByKind) != 0 {
		t.Errorf("second round NAPI outcomes %v, want none", r2.NAPIByKind)
	}
	// RX 0's pid now names another thread: it is not restored.
	tree.WriteNAPIThread(fakesys.NAPIThread{PID: rx[0], Comm: "napi/eth1-8193", Allowed: cpumask.New(3)})
	inv := fakeplan.Read(t, tree).Inventory
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

// Pin errors are classified: ESRCH or a reused pid vanished; EPERM,
// EINVAL (no CPU of the mask in the thread's cpuset, or
// PF_NO_SETAFFINITY) and a mask the kernel trimmed refused, never a
// rescan; anything else error; none counts as an IRQ outcome.
func TestApplyNAPIClassifiesErrors(t *testing.T) {
	tree, rx, tx := napiTree(t)
	pinErr := func(errno syscall.Errno, kind error) error {
		return fmt.Errorf("napi: sched_setaffinity pid 1: %w: %w", kind, errno)
	}
	w := &fakeWriter{pin: map[int]error{
		rx[0]: pinErr(syscall.ESRCH, napi.ErrThreadGone),
		rx[1]: pinErr(syscall.EINVAL, apply.ErrNoOnlineCPU),
		rx[2]: pinErr(syscall.EPERM, apply.ErrNotPermitted),
		rx[3]: fmt.Errorf("/proc/1/status: Name \"bash\": %w", apply.ErrNotThatThread),
		tx[0]: fmt.Errorf("napi: sched_setaffinity pid %d: %w", tx[0], syscall.EFAULT),
		tx[1]: fmt.Errorf("pin pid %d to 0-1: the kernel kept 1: %w", tx[1], apply.ErrPinRestricted),
	}}
	core, logs := observer.New(zapcore.DebugLevel)
	a := apply.New(w, zap.New(core), apply.Options{})
	r, _ := a.Apply(context.Background(), fakeplan.Plan(t, tree, config.Default()), policy.Memory{})
	want := map[apply.Kind]int{apply.KindVanished: 2, apply.KindRefused: 3, apply.KindError: 1, apply.KindOK: 2}
	if !maps.Equal(r.NAPIByKind, want) || r.NAPIWritten != 2 || r.Stale {
		t.Errorf("NAPI outcomes %v, %d written, stale %t; want %v, 2, false", r.NAPIByKind, r.NAPIWritten, r.Stale, want)
	}
	errnos := map[int]string{}
	for _, o := range r.Writes {
		errnos[o.PID] = o.Errno
	}
	if errnos[rx[1]] != "EINVAL" || errnos[tx[1]] != "restricted" {
		t.Errorf("errnos %v, want EINVAL for pid %d, restricted for pid %d", errnos, rx[1], tx[1])
	}
	if r.ByKind[apply.KindVanished]+r.ByKind[apply.KindRefused] != 0 || len(r.Failed) != 0 {
		t.Errorf("NAPI outcomes leaked into the IRQs': %v, failed %v", r.ByKind, r.Failed)
	}
	if n := logs.FilterMessage("cannot pin NAPI thread").Len(); n != 4 {
		t.Errorf("%d warnings, want 4 (3 refused, error)", n)
	}
	if got := apply.KindRefused.String(); got != "refused" {
		t.Errorf("KindRefused is %q", got)
	}
}

// A pin the kernel trims (a cpuset) is refused every round it is
// tried, and warned of once per thread, not every round; the thread's
// CPUs from before are kept for Restore.
func TestApplyNAPIRestrictedWarnsOnce(t *testing.T) {
	tree, rx, tx := napiTree(t)
	w := &fakeWriter{pin: map[int]error{}}
	for _, pid := range append(rx, tx...) {
		w.pin[pid] = fmt.Errorf("pin pid %d: %w", pid, apply.ErrPinRestricted)
	}
	core, logs := observer.New(zapcore.WarnLevel)
	a := apply.New(w, zap.New(core), apply.Options{})
	for round := range 2 {
		r, _ := a.Apply(context.Background(), fakeplan.Plan(t, tree, config.Default()), policy.Memory{})
		if r.NAPIByKind[apply.KindRefused] != 8 || r.NAPIWritten != 0 || r.Stale {
			t.Errorf("round %d: NAPI outcomes %v, %d written, stale %t; want 8 refused", round, r.NAPIByKind, r.NAPIWritten, r.Stale)
		}
	}
	if n := logs.FilterMessage("cannot pin NAPI thread").Len(); n != 8 {
		t.Errorf("%d warnings in 2 rounds, want 8 (once per thread)", n)
	}
	// The kernel moved them, to part of the mask: Restore puts them back.
	if orig, _, _ := a.Remembered(); orig != 8 {
		t.Errorf("%d NAPI originals kept, want 8", orig)
	}
}

// Apply forgets the originals, dry-run masks and warnings of NAPI
// threads, and the warnings of tx queues, that the plan no longer
// lists, and keeps those it lists and the XPS originals.
func TestApplyForgetsGoneThreads(t *testing.T) {
	tree, rx, tx := napiTree(t)
	w := &fakeWriter{pin: map[int]error{rx[0]: syscall.EPERM}, xps: map[string]error{"eth0/0": syscall.EPERM}}
	a := apply.New(w, zap.NewNop(), apply.Options{})
	r, _ := a.Apply(context.Background(), fakeplan.Plan(t, tree, config.Default()), policy.Memory{})
	if orig, _, warned := a.Remembered(); orig != 7 || warned != 2 || r.XPSWritten == 0 {
		t.Fatalf("after round 1: %d NAPI originals, %d warned, %d XPS written; want 7, 2, some", orig, warned, r.XPSWritten)
	}
	// eth0's threads but rx[0] (refused) and tx[1] (pinned) exited, and
	// its tx-0 (refused) is gone.
	p := fakeplan.Plan(t, tree, config.Default())
	keepOnly(t, p, "0000:00:04.0", rx[0], tx[1])
	a.Apply(context.Background(), p, policy.Memory{})
	if orig, _, warned := a.Remembered(); orig != 1 || warned != 1 {
		t.Errorf("after round 2: %d NAPI originals, %d warned; want 1 (pid %d), 1 (pid %d)", orig, warned, tx[1], rx[0])
	}
	if res := a.Restore(context.Background(), nil); res.XPSWritten != r.XPSWritten {
		t.Errorf("restored %d XPS maps, want the %d written", res.XPSWritten, r.XPSWritten)
	}

	dry := apply.New(&fakeWriter{}, zap.NewNop(), apply.Options{DryRun: true})
	dry.Apply(context.Background(), fakeplan.Plan(t, tree, config.Default()), policy.Memory{})
	p = fakeplan.Plan(t, tree, config.Default())
	keepOnly(t, p, "0000:00:04.0", tx[1])
	dry.Apply(context.Background(), p, policy.Memory{})
	if _, would, _ := dry.Remembered(); would != 1 {
		t.Errorf("dry run keeps %d NAPI masks, want 1", would)
	}
}

// keepOnly leaves device pci of p the NAPI threads of pids alone and
// drops its tx queue 0.
func keepOnly(t *testing.T, p *policy.Plan, pci string, pids ...int) {
	t.Helper()
	for i := range p.Devices {
		d := &p.Devices[i]
		if d.PCI != pci {
			continue
		}
		d.NAPIThreads = slices.DeleteFunc(d.NAPIThreads, func(th policy.NAPIThread) bool { return !slices.Contains(pids, th.PID) })
		d.TxQueues = slices.DeleteFunc(d.TxQueues, func(q policy.TxQueue) bool { return q.Queue == 0 })
		if len(d.NAPIThreads) != len(pids) {
			t.Fatalf("device %s has threads %v, want pids %v", pci, d.NAPIThreads, pids)
		}
		return
	}
	t.Fatalf("no device %s in the plan", pci)
}

// A dry run pins nothing and logs each thread once while its plan holds.
func TestApplyNAPIDryRun(t *testing.T) {
	tree, _, _ := napiTree(t)
	w := &fakeWriter{}
	core, logs := observer.New(zapcore.InfoLevel)
	a := apply.New(w, zap.New(core), apply.Options{DryRun: true})
	for range 2 {
		r, _ := a.Apply(context.Background(), fakeplan.Plan(t, tree, config.Default()), policy.Memory{})
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

// ProcWriter pins only when the command said the roots are the host's:
// a fixture's pids are not this machine's threads.
func TestProcWriterPinThreadRefusesFixtureRoots(t *testing.T) {
	err := apply.ProcWriter{Proc: t.TempDir()}.PinThread(1, "napi/eth0-8193", cpumask.New(0))
	if !errors.Is(err, apply.ErrNotHostProc) {
		t.Errorf("err = %v, want ErrNotHostProc", err)
	}
}

// ProcWriter checks right before sched_setaffinity that the pid is
// still the kthread (name, parent kthreadd), and takes a read-back
// mask other than the one asked for on the online CPUs as a refusal.
func TestProcWriterPinThread(t *testing.T) {
	tree, rx, _ := napiTree(t)
	pid := rx[0]
	comm := "napi/eth0-8193"
	tree.WriteFile("proc/77/stat", "77 (napi/eth0-8193) S 1 77 77 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0\n")
	cases := []struct {
		name     string
		pid      int
		comm     string
		ask, got cpumask.Mask
		want     error
		pins     bool
	}{
		{"kept", pid, comm, cpumask.New(0, 1, 2, 3), cpumask.New(0, 1, 2, 3), nil, true},
		{"offline CPU dropped", pid, comm, cpumask.New(0, 1, 40), cpumask.New(0, 1), nil, true},
		{"cpuset trims", pid, comm, cpumask.New(0, 1, 2, 3), cpumask.New(2, 3), apply.ErrPinRestricted, true},
		{"pid reused by another kthread", pid, "napi/eth0-8194", cpumask.New(0, 1, 2, 3), cpumask.New(0, 1, 2, 3), apply.ErrNotThatThread, false},
		{"pid reused by a process", 77, comm, cpumask.New(0, 1, 2, 3), cpumask.New(0, 1, 2, 3), apply.ErrNotThatThread, false},
		{"exited", 999, comm, cpumask.New(0, 1, 2, 3), cpumask.New(0, 1, 2, 3), napi.ErrThreadGone, false},
	}
	w := apply.ProcWriter{Proc: tree.Proc(), Sys: tree.Sys()}
	for _, c := range cases {
		pinned := false
		err := w.PinThreadWith(c.pid, c.comm, c.ask, func(int, cpumask.Mask) (cpumask.Mask, error) {
			pinned = true
			return c.got, nil
		})
		if (c.want == nil && err != nil) || !errors.Is(err, c.want) || pinned != c.pins {
			t.Errorf("%s: err %v, pinned %t; want %v, %t", c.name, err, pinned, c.want, c.pins)
		}
	}
}
