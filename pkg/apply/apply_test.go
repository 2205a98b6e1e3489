package apply_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/policy"
)

func itoa(n int) string { return strconv.Itoa(n) }

// call is one WriteAffinity: "45:3".
type call string

// fakeWriter answers writes like the kernel would: errs[irq] is used up
// one error per attempt (nil for success), then always[irq] if set,
// then ENOSPC for a mask whose CPUs are all in full, else success.
// Errors are wrapped the way ProcWriter wraps them.
type fakeWriter struct {
	errs   map[int][]error
	always map[int]error
	full   cpumask.Mask
	calls  []call
	// xps answers WriteXPS by "IF/N" (nil: success); xpsCalls logs
	// them as "IF/N:mask".
	xps      map[string]error
	xpsCalls []call
	// pin answers PinThread by pid (nil: success); pinCalls logs them
	// as "pid:mask".
	pin      map[int]error
	pinCalls []call
}

func (f *fakeWriter) PinThread(pid int, _ string, m cpumask.Mask) error {
	f.pinCalls = append(f.pinCalls, call(fmt.Sprintf("%d:%s", pid, m)))
	return f.pin[pid]
}

func (f *fakeWriter) WriteXPS(iface string, queue int, m cpumask.Mask) error {
	key := fmt.Sprintf("%s/%d", iface, queue)
	f.xpsCalls = append(f.xpsCalls, call(key+":"+m.String()))
	return f.xps[key]
}

func (f *fakeWriter) WriteAffinity(irq int, m cpumask.Mask) error {
	f.calls = append(f.calls, call(fmt.Sprintf("%d:%s", irq, m)))
	wrap := func(err error) error {
		if err == nil {
			return nil
		}
		return fmt.Errorf("write /proc/irq/%d/smp_affinity_list %q: %w", irq, m.String(), err)
	}
	if l := f.errs[irq]; len(l) > 0 {
		f.errs[irq] = l[1:]
		return wrap(l[0])
	}
	if err, ok := f.always[irq]; ok {
		return wrap(err)
	}
	if !m.IsEmpty() && m.IsSubsetOf(f.full) {
		return wrap(syscall.ENOSPC)
	}
	return nil
}

func (f *fakeWriter) reset() []call {
	c := f.calls
	f.calls = nil
	return c
}

// irq is a queue IRQ currently on cur and planned on planned ("" leaves
// it alone).
func irq(t testing.TB, n int, name, cur, planned string) policy.IRQ {
	t.Helper()
	q := policy.IRQ{Number: n, Name: name, Queue: -1, CPU: -1, Hop: -1, Distance: -1,
		Current: fakesys.MustMask(t, cur), Planned: fakesys.MustMask(t, planned)}
	if q.Planned.Weight() == 1 {
		q.CPU = q.Planned.First()
	}
	return q
}

// plan is one device with the given CPU order, which is also the
// allowed CPUs, and IRQs.
func plan(order []int, irqs ...policy.IRQ) *policy.Plan {
	return &policy.Plan{Allowed: cpumask.New(order...),
		Devices: []policy.Device{{PCI: "0000:00:04.0", Driver: "virtio-pci", Order: order, IRQs: irqs}}}
}

// applyOnce applies p with an empty memory and returns the result only.
func applyOnce(ctx context.Context, a *apply.Applier, p *policy.Plan) apply.Result {
	r, _ := a.Apply(ctx, p, policy.Memory{})
	return r
}

// recorder is an Options.Sleep that only records the waits.
type recorder struct{ sleeps []time.Duration }

func (r *recorder) sleep(d time.Duration) { r.sleeps = append(r.sleeps, d) }

func observed() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	return zap.New(core), logs
}

func checkCalls(t *testing.T, got []call, want ...call) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("writes = %v, want %v", got, want)
	}
}

func checkKinds(t *testing.T, r apply.Result, want map[apply.Kind]int) {
	t.Helper()
	if !maps.Equal(r.ByKind, want) {
		t.Errorf("ByKind = %v, want %v", r.ByKind, want)
	}
}

var order8 = []int{0, 1, 2, 3, 4, 5, 6, 7}

func TestApplyWritesOnlyChanges(t *testing.T) {
	w := &fakeWriter{}
	a := apply.New(w, zap.NewNop(), apply.Options{})
	p := plan(order8,
		irq(t, 40, "virtio0-config", "0-7", ""),        // left alone
		irq(t, 41, "virtio0-input.0", "3", "3"),        // already there
		irq(t, 42, "virtio0-output.0", "0-7", "4"),     // moves
		irq(t, 43, "virtio0-input.1", "0-3", "0-3"),    // control-style mask, unchanged
		irq(t, 44, "virtio0-output.1", "0,2,4", "0-5"), // wider mask
	)
	r := applyOnce(context.Background(), a, p)
	checkCalls(t, w.reset(), "42:4", "44:0-5")
	if r.Written != 2 || r.Unchanged != 2 || r.DryRun != 0 || len(r.Failed) != 0 || r.Stale {
		t.Errorf("result = %+v", r)
	}
	checkKinds(t, r, map[apply.Kind]int{apply.KindOK: 2})
}

func TestApplyClassifiesErrors(t *testing.T) {
	ms := time.Millisecond
	busy4 := []error{syscall.EBUSY, syscall.EBUSY, syscall.EBUSY, syscall.EBUSY}
	for _, tc := range []struct {
		name      string
		errs      []error // for IRQ 45, one per attempt
		kind      apply.Kind
		writes    int
		sleeps    []time.Duration
		failed    bool
		stale     bool
		warn      int // warn-level log lines
		info      int // info-level log lines
		errnoName string
	}{
		{name: "EIO", errs: []error{syscall.EIO}, kind: apply.KindManaged, writes: 1, info: 1, errnoName: "EIO"},
		{name: "EPERM", errs: []error{syscall.EPERM}, kind: apply.KindManaged, writes: 1, info: 1, errnoName: "EPERM"},
		{name: "EINVAL", errs: []error{syscall.EINVAL}, kind: apply.KindStale, writes: 1, failed: true, stale: true, warn: 1, errnoName: "EINVAL"},
		{name: "EBUSY then ok", errs: []error{syscall.EBUSY}, kind: apply.KindOK, writes: 2, sleeps: []time.Duration{10 * ms}},
		{name: "EBUSY thrice then ok", errs: busy4[:3], kind: apply.KindOK, writes: 4, sleeps: []time.Duration{10 * ms, 20 * ms, 40 * ms}},
		{name: "EBUSY exhausted", errs: busy4, kind: apply.KindBusy, writes: 4, sleeps: []time.Duration{10 * ms, 20 * ms, 40 * ms},
			failed: true, warn: 1, errnoName: "EBUSY"},
		{name: "EAGAIN then ok", errs: []error{syscall.EAGAIN, syscall.EAGAIN}, kind: apply.KindOK, writes: 3, sleeps: []time.Duration{10 * ms, 20 * ms}},
		{name: "EAGAIN exhausted", errs: []error{syscall.EAGAIN, syscall.EBUSY, syscall.EAGAIN, syscall.EAGAIN}, kind: apply.KindBusy, writes: 4,
			sleeps: []time.Duration{10 * ms, 20 * ms, 40 * ms}, failed: true, warn: 1, errnoName: "EAGAIN"},
		{name: "ENOENT", errs: []error{syscall.ENOENT}, kind: apply.KindVanished, writes: 1},
		{name: "EOVERFLOW", errs: []error{syscall.EOVERFLOW}, kind: apply.KindError, writes: 1, failed: true, warn: 1, errnoName: "EOVERFLOW"},
		{name: "ERANGE", errs: []error{syscall.ERANGE}, kind: apply.KindError, writes: 1, failed: true, warn: 1, errnoName: "ERANGE"},
		{name: "ENOMEM", errs: []error{syscall.ENOMEM}, kind: apply.KindError, writes: 1, failed: true, warn: 1, errnoName: "ENOMEM"},
		{name: "no errno", errs: []error{errors.New("short write")}, kind: apply.KindError, writes: 1, failed: true, warn: 1},
		{name: "ENOSPC everywhere", errs: []error{syscall.ENOSPC}, kind: apply.KindNoSpace, writes: 1, failed: true, warn: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// IRQ 45 gets the scripted errors; 46 follows to show the
			// round goes on. With ENOSPC, CPU 3 is the only CPU of the
			// order, so there is nowhere to fall back to.
			w := &fakeWriter{errs: map[int][]error{45: slices.Clone(tc.errs)}}
			rec := &recorder{}
			log, logs := observed()
			a := apply.New(w, log, apply.Options{Sleep: rec.sleep})
			r := applyOnce(context.Background(), a, plan([]int{3},
				irq(t, 45, "eth0-rx-0", "0-7", "3"),
				irq(t, 46, "eth0-rx-1", "0-7", "0")))

			calls := w.reset()
			want := slices.Repeat([]call{"45:3"}, tc.writes)
			checkCalls(t, calls, append(want, "46:0")...)
			wantKinds := map[apply.Kind]int{apply.KindOK: 1}
			wantKinds[tc.kind]++
			checkKinds(t, r, wantKinds)
			if _, failed := r.Failed[45]; failed != tc.failed || (failed && r.Failed[45] != tc.kind) {
				t.Errorf("Failed = %v, want IRQ 45 failed=%v as %s", r.Failed, tc.failed, tc.kind)
			}
			if _, failed := r.Failed[46]; failed {
				t.Errorf("IRQ 46 failed: %v", r.Failed)
			}
			if r.Stale != tc.stale {
				t.Errorf("Stale = %v, want %v", r.Stale, tc.stale)
			}
			if wantWritten := wantKinds[apply.KindOK]; r.Written != wantWritten {
				t.Errorf("Written = %d, want %d", r.Written, wantWritten)
			}
			if !slices.Equal(rec.sleeps, tc.sleeps) {
				t.Errorf("sleeps = %v, want %v", rec.sleeps, tc.sleeps)
			}
			warns := logs.FilterLevelExact(zapcore.WarnLevel).All()
			if len(warns) != tc.warn {
				t.Errorf("%d warn logs, want %d: %v", len(warns), tc.warn, warns)
			}
			infos := logs.FilterLevelExact(zapcore.InfoLevel).All()
			if len(infos) != tc.info {
				t.Errorf("%d info logs, want %d: %v", len(infos), tc.info, infos)
			}
			if tc.errnoName != "" {
				if n := logs.FilterField(zap.String("errno", tc.errnoName)).Len(); n != 1 {
					t.Errorf("%d logs with errno=%s, want 1", n, tc.errnoName)
				}
			}
			if n := logs.FilterLevelExact(zapcore.DebugLevel).FilterMessage("wrote IRQ affinity").Len(); n != len(calls) {
				t.Errorf("%d debug logs of writes, want %d", n, len(calls))
			}
		})
	}
}

func TestApplyRetriesOption(t *testing.T) {
	for _, tc := range []struct {
		retries, writes int
	}{{0, 4}, {-1, 1}, {1, 2}, {5, 6}} {
		w := &fakeWriter{always: map[int]error{45: syscall.EBUSY}}
		rec := &recorder{}
		a := apply.New(w, zap.NewNop(), apply.Options{Retries: tc.retries, Backoff: time.Second, Sleep: rec.sleep})
		r := applyOnce(context.Background(), a, plan(order8, irq(t, 45, "q", "0", "1")))
		if len(w.calls) != tc.writes || r.ByKind[apply.KindBusy] != 1 {
			t.Errorf("Retries %d: %d writes, %v; want %d writes, busy", tc.retries, len(w.calls), r.ByKind, tc.writes)
		}
		if len(rec.sleeps) > 0 && rec.sleeps[0] != time.Second {
			t.Errorf("Retries %d: first backoff %v, want 1s", tc.retries, rec.sleeps[0])
		}
	}
}

// TestApplyNoSpaceIsLearned: ENOSPC is an outcome, not a reason for the
// writer to pick another CPU: the CPUs go into the memory, a later write
// wholly inside them in the same Apply is not tried, and the next plan
// (policy.Compute) places around them. Full CPUs the plan no longer
// allows (an offline CPU frees its vectors) are forgotten.
func TestApplyNoSpaceIsLearned(t *testing.T) {
	w := &fakeWriter{full: fakesys.MustMask(t, "0-1,5")}
	log, logs := observed()
	a := apply.New(w, log, apply.Options{})
	r, mem := a.Apply(context.Background(), plan(order8,
		irq(t, 40, "q0", "0-7", "5"),    // ENOSPC
		irq(t, 41, "q0-tx", "0-7", "5"), // 5 known full: not tried
		irq(t, 42, "c", "4-7", "0-1"),   // ENOSPC on both
		irq(t, 43, "q1", "0-7", "6"),    // room
	), policy.Memory{})
	checkCalls(t, w.reset(), "40:5", "42:0-1", "43:6")
	checkKinds(t, r, map[apply.Kind]int{apply.KindOK: 1, apply.KindNoSpace: 3})
	if !maps.Equal(r.Failed, map[int]apply.Kind{40: apply.KindNoSpace, 41: apply.KindNoSpace, 42: apply.KindNoSpace}) || r.Written != 1 {
		t.Errorf("result = %+v", r)
	}
	if got := mem.Full.String(); got != "0-1,5" {
		t.Errorf("memory's full CPUs %s, want 0-1,5", got)
	}
	if len(r.Writes) != 4 || r.Writes[1].IRQ != 41 || r.Writes[1].Kind != apply.KindNoSpace || !r.Writes[1].After.Equal(fakesys.MustMask(t, "5")) {
		t.Errorf("outcomes %+v", r.Writes)
	}
	if n := logs.FilterMessageSnippet("no free vector").Len(); n != 2 {
		t.Errorf("%d no-space warnings, want 2 (one per write the kernel refused)", n)
	}

	// CPU 5 went offline: the plan does not allow it, its mark goes.
	p := plan([]int{0, 1, 2, 3, 4, 6, 7}, irq(t, 40, "q0", "0-7", "6"))
	_, mem = a.Apply(context.Background(), p, mem)
	if got := mem.Full.String(); got != "0-1" {
		t.Errorf("full CPUs after CPU 5 went offline: %s, want 0-1", got)
	}
}

func TestManagedLoggedOnceNotRetried(t *testing.T) {
	w := &fakeWriter{always: map[int]error{45: syscall.EIO}}
	log, logs := observed()
	a := apply.New(w, log, apply.Options{})
	p := plan(order8, irq(t, 45, "nvme0q1", "0", "3"), irq(t, 46, "nvme0q2", "0", "4"))
	refusals := func() int { return logs.FilterMessageSnippet("refuses to move").Len() }

	r, mem := a.Apply(context.Background(), p, policy.Memory{})
	checkCalls(t, w.reset(), "45:3", "46:4")
	checkKinds(t, r, map[apply.Kind]int{apply.KindOK: 1, apply.KindManaged: 1})
	if n := refusals(); n != 1 {
		t.Fatalf("%d refusal logs, want 1", n)
	}
	if e := logs.FilterMessageSnippet("refuses to move").All()[0]; e.Level != zapcore.InfoLevel {
		t.Errorf("refusal logged at %v, want info", e.Level)
	}

	want := policy.Refusals{45: {Name: "nvme0q1", Errno: "EIO"}}
	if !maps.Equal(mem.Refused, want) {
		t.Fatalf("memory's refusals %v, want %v", mem.Refused, want)
	}

	// Next round the planner, given the memory, leaves 45 alone: no
	// write, no log, and the refusal is kept.
	p.Devices[0].IRQs[0] = managedIRQ(45, "nvme0q1")
	p.Devices[0].IRQs[1].Current = fakesys.MustMask(t, "4")
	r, mem = a.Apply(context.Background(), p, mem)
	checkCalls(t, w.reset())
	checkKinds(t, r, map[apply.Kind]int{})
	if n := refusals(); n != 1 {
		t.Errorf("%d refusal logs after round 2, want 1", n)
	}
	if !maps.Equal(mem.Refused, want) {
		t.Errorf("refusals after round 2 = %v, want %v", mem.Refused, want)
	}

	// The number is re-requested by another device: try again.
	delete(w.always, 45)
	r = applyOnce(context.Background(), a, plan(order8, irq(t, 45, "mlx5_comp0@pci:0000:41:00.0", "0", "3")))
	checkCalls(t, w.reset(), "45:3")
	checkKinds(t, r, map[apply.Kind]int{apply.KindOK: 1})
}

func inv(irqs ...inventory.IRQ) *inventory.Inventory {
	return &inventory.Inventory{CPUs: cpumask.New(0, 1, 2, 3, 4, 5, 6, 7), IRQs: irqs}
}

// managedIRQ is an IRQ as the planner plans one it knows is managed.
func managedIRQ(n int, name string) policy.IRQ {
	return policy.IRQ{Number: n, Name: name, Role: policy.RoleQueue, Managed: true, CPU: -1, Hop: -1, Distance: -1}
}

// TestRefusals: Apply adds EIO and EPERM to the memory by number and
// name, leaves the caller's memory as it was, and forgets an IRQ when a
// plan shows it freed or requested again under another name.
func TestRefusals(t *testing.T) {
	w := &fakeWriter{always: map[int]error{45: syscall.EIO, 46: syscall.EPERM, 47: syscall.EIO}}
	a := apply.New(w, zap.NewNop(), apply.Options{})
	before := policy.Memory{Refused: policy.Refusals{}}
	_, mem := a.Apply(context.Background(), plan(order8,
		irq(t, 44, "q0", "0", "2"),
		irq(t, 45, "q1", "0", "3"),
		irq(t, 46, "q2", "0", "4"),
		irq(t, 47, "q3", "0", "5")), before)
	want := policy.Refusals{45: {Name: "q1", Errno: "EIO"}, 46: {Name: "q2", Errno: "EPERM"}, 47: {Name: "q3", Errno: "EIO"}}
	if !maps.Equal(mem.Refused, want) {
		t.Errorf("refusals %v, want %v", mem.Refused, want)
	}
	if len(before.Refused) != 0 {
		t.Errorf("Apply changed the caller's memory: %v", before.Refused)
	}

	// 45 re-requested under another name, 46 freed, 47 still refused.
	delete(w.always, 45)
	_, mem = a.Apply(context.Background(), plan(order8, irq(t, 45, "other", "2", "2"), managedIRQ(47, "q3")), mem)
	if want := (policy.Refusals{47: {Name: "q3", Errno: "EIO"}}); !maps.Equal(mem.Refused, want) {
		t.Errorf("refusals after renames = %v, want %v", mem.Refused, want)
	}
}

func TestRestore(t *testing.T) {
	w := &fakeWriter{errs: map[int][]error{48: {syscall.EINVAL}}, always: map[int]error{49: syscall.EIO}}
	a := apply.New(w, zap.NewNop(), apply.Options{})
	applyOnce(context.Background(), a, plan(order8,
		irq(t, 45, "q0", "0-7", "3"),
		irq(t, 46, "q1", "0-3", "4"),
		irq(t, 47, "q2", "0-7", "5"),
		irq(t, 48, "q3", "0-7", "6"),   // EINVAL: not changed, not recorded
		irq(t, 49, "q4", "0-7", "7"),   // EIO: not changed, not recorded
		irq(t, 50, "q5", "0-7", "0-7"), // unchanged: nothing to restore
	))
	// A second round moves 45 again: its original stays 0-7. 47 is now
	// another IRQ: its original is dropped.
	applyOnce(context.Background(), a, plan(order8,
		irq(t, 45, "q0", "3", "2"),
		irq(t, 47, "rebound", "0-7", "0-7")))
	w.reset()

	w.always[46] = syscall.ENOENT // vanished since
	r := a.Restore(context.Background(), nil)
	checkCalls(t, w.reset(), "45:0-7", "46:0-3")
	checkKinds(t, r, map[apply.Kind]int{apply.KindOK: 1, apply.KindVanished: 1})
	if r.Written != 1 || len(r.Failed) != 0 {
		t.Errorf("result = %+v", r)
	}
	// Everything restored or gone: nothing left to write.
	r = a.Restore(context.Background(), nil)
	checkCalls(t, w.reset())
	if r.Written != 0 || len(r.ByKind) != 0 {
		t.Errorf("second Restore: %+v", r)
	}
}

func TestRestoreKeepsFailuresForRetry(t *testing.T) {
	w := &fakeWriter{}
	rec := &recorder{}
	a := apply.New(w, zap.NewNop(), apply.Options{Sleep: rec.sleep})
	applyOnce(context.Background(), a, plan(order8, irq(t, 45, "q0", "0-7", "3"), irq(t, 46, "q1", "0-7", "4")))
	w.reset()
	w.always = map[int]error{45: syscall.EBUSY}
	r := a.Restore(context.Background(), nil)
	checkCalls(t, w.reset(), "45:0-7", "45:0-7", "45:0-7", "45:0-7", "46:0-7")
	if r.Failed[45] != apply.KindBusy || r.Written != 1 {
		t.Errorf("result = %+v", r)
	}
	delete(w.always, 45)
	r = a.Restore(context.Background(), nil)
	checkCalls(t, w.reset(), "45:0-7")
	if r.Written != 1 {
		t.Errorf("retry: %+v", r)
	}
}

// TestRestoreSkipsRenamed: Restore with a fresh inventory skips and
// forgets IRQs that were freed or re-requested under another name.
func TestRestoreSkipsRenamed(t *testing.T) {
	w := &fakeWriter{}
	a := apply.New(w, zap.NewNop(), apply.Options{})
	applyOnce(context.Background(), a, plan(order8,
		irq(t, 45, "q0", "0-7", "3"), irq(t, 46, "q1", "0-7", "4"), irq(t, 47, "q2", "0-7", "5")))
	w.reset()
	a.Restore(context.Background(), inv(inventory.IRQ{Number: 45, Name: "q0"}, inventory.IRQ{Number: 46, Name: "other"}))
	checkCalls(t, w.reset(), "45:0-7")
	a.Restore(context.Background(), nil)
	checkCalls(t, w.reset())
}

func TestDryRun(t *testing.T) {
	w := &fakeWriter{}
	log, logs := observed()
	a := apply.New(w, log, apply.Options{DryRun: true})
	r := applyOnce(context.Background(), a, plan(order8,
		irq(t, 45, "q0", "0-7", "3"), irq(t, 46, "q1", "4", "4"), irq(t, 47, "q2", "0-7", "5"), irq(t, 48, "c", "0-7", "")))
	checkCalls(t, w.reset())
	if r.DryRun != 2 || r.Written != 0 || r.Unchanged != 1 || r.ByKind[apply.KindDryRun] != 2 || len(r.Failed) != 0 {
		t.Errorf("result = %+v", r)
	}
	if n := logs.FilterLevelExact(zapcore.InfoLevel).FilterMessageSnippet("would set").Len(); n != 2 {
		t.Errorf("%d dry-run info logs, want 2", n)
	}
	// Nothing was changed, so there is nothing to restore.
	r = a.Restore(context.Background(), nil)
	checkCalls(t, w.reset())
	if r.Written != 0 {
		t.Errorf("Restore after dry run: %+v", r)
	}
}

func TestCancelStopsBackoff(t *testing.T) {
	t.Run("injected sleep", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w := &fakeWriter{always: map[int]error{45: syscall.EBUSY}}
		n := 0
		a := apply.New(w, zap.NewNop(), apply.Options{Sleep: func(time.Duration) { n++; cancel() }})
		r := applyOnce(ctx, a, plan(order8, irq(t, 45, "q0", "0", "1"), irq(t, 46, "q1", "0", "2")))
		checkCalls(t, w.reset(), "45:1") // no retry, and 46 not started
		if n != 1 || r.Failed[45] != apply.KindBusy {
			t.Errorf("%d sleeps, result %+v", n, r)
		}
	})
	t.Run("timer", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w := &fakeWriter{always: map[int]error{45: syscall.EBUSY}}
		a := apply.New(w, zap.NewNop(), apply.Options{Backoff: time.Hour})
		time.AfterFunc(20*time.Millisecond, cancel)
		done := make(chan apply.Result)
		go func() { done <- applyOnce(ctx, a, plan(order8, irq(t, 45, "q0", "0", "1"))) }()
		select {
		case r := <-done:
			if r.Failed[45] != apply.KindBusy {
				t.Errorf("result %+v", r)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Apply still sleeping after its context was cancelled")
		}
	})
	t.Run("already cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		w := &fakeWriter{}
		a := apply.New(w, zap.NewNop(), apply.Options{})
		applyOnce(ctx, a, plan(order8, irq(t, 45, "q0", "0", "1")))
		a.Restore(ctx, nil)
		checkCalls(t, w.reset())
	})
}

// TestProgressPerWrite: Progress is called after every write attempt,
// retries included, so a watchdog sees a long Apply move.
func TestProgressPerWrite(t *testing.T) {
	w := &fakeWriter{errs: map[int][]error{45: {syscall.EBUSY, syscall.EBUSY}}}
	rec := &recorder{}
	calls := 0
	a := apply.New(w, zap.NewNop(), apply.Options{Sleep: rec.sleep, Progress: func() { calls++ }})
	applyOnce(context.Background(), a, plan(order8, irq(t, 45, "q0", "0-7", "3"), irq(t, 46, "q1", "0-7", "4"), irq(t, 47, "q2", "5", "5")))
	if want := len(w.calls); calls != want || want != 4 {
		t.Errorf("Progress called %d times for %d write attempts, want 4 and 4", calls, want)
	}
}
