package state_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/internal/syscount"
	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
	"github.com/numairqd/numairqd/pkg/watch"
	"go.uber.org/zap"
)

// offlineCPUs6and7 rewrites tr's machine as after CPUs 6 and 7 went
// offline, and IRQ 25 as the kernel breaks an IRQ whose only CPU went:
// onto the remaining CPUs. /proc/interrupts keeps its 8 columns.
func offlineCPUs6and7(tr *fakesys.Tree) {
	tr.WriteFile("sys/devices/system/cpu/online", "0-5\n")
	tr.WriteFile("sys/devices/system/cpu/offline", "6-7\n")
	tr.WriteFile("sys/devices/system/cpu/cpu6/online", "0\n")
	tr.WriteFile("sys/devices/system/cpu/cpu7/online", "0\n")
	tr.WriteFile("sys/devices/system/node/node3/cpulist", "\n")
	tr.WriteFile("proc/irq/25/smp_affinity_list", "0-5\n")
}

// TestReadScopes: a CPU-scope read re-reads topology and affinities and
// nothing else, taking the online CPUs as the inventory's; a
// devices-scope read whose /proc/interrupts disagrees with the topology
// is read again whole and reported inconsistent.
func TestReadScopes(t *testing.T) {
	tr := machineTree(t, true)
	r := state.NewReader(state.Roots{Sys: tr.Sys(), Proc: tr.Proc()})
	if _, ok, err := r.Read(watch.ScopeCPU, nil); err != nil || !ok {
		t.Fatalf("first read: consistent %v, %v", ok, err)
	}
	offlineCPUs6and7(tr)
	m, ok, err := r.Read(watch.ScopeCPU, nil)
	if err != nil || !ok {
		t.Fatalf("CPU-scope read: consistent %v, %v", ok, err)
	}
	if got := m.Inventory.CPUs.String(); got != "0-5" || m.Snapshot.Online().String() != "0-5" {
		t.Errorf("CPUs: inventory %s, topology %s; want 0-5 for both", got, m.Snapshot.Online())
	}
	if q, _ := m.Inventory.IRQ(25); q.Affinity.String() != "0-5" {
		t.Errorf("IRQ 25 = %s, want the broken 0-5 re-read", q.Affinity)
	}
	p, err := r.Plan(watch.ScopeDevices, nil, config.Default(), nil, policy.Balancing{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Consistent || p.Scope != watch.ScopeAll {
		t.Errorf("devices-scope read of an 8-column /proc/interrupts on 6 CPUs: consistent %v, scope %v; want false, all", p.Consistent, p.Scope)
	}
}

// roundBench runs a whole round (read, plan, apply through procfs
// writes into the fixture) on the scale host under scope, with prepare
// run, untimed, before each.
func roundBench(b *testing.B, scope watch.Scope, changed []string, prepare func(tr *fakesys.Tree, i int)) {
	tr := fakesys.New(b)
	tr.AddScaleHost()
	roots := state.Roots{Sys: tr.Sys(), Proc: tr.Proc()}
	r := state.NewReader(roots)
	a := apply.New(fileWriter{roots.Proc}, zap.NewNop(), apply.Options{})
	cfg := config.Default()
	var read, planning, applying time.Duration
	round := func() apply.Result {
		p, err := r.Plan(scope, changed, cfg, nil, policy.Balancing{})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		res := a.Apply(b.Context(), p.Plan)
		read, planning, applying = read+p.Read, planning+p.Planning, applying+time.Since(start)
		return res
	}
	round() // the startup round places everything
	read, planning, applying = 0, 0, 0
	writes := 0
	syscount.Measure(b, func(i int) { prepare(tr, i) }, func() {
		res := round()
		if len(res.Failed) > 0 {
			b.Fatalf("round failed writes: %v", res.Failed)
		}
		writes += res.Written
	})
	b.ReportMetric(float64(writes)/float64(b.N), "writes/op")
	// The phases, as the daemon's round log and metrics show them.
	for _, ph := range []struct {
		unit string
		d    time.Duration
	}{{"read-ms/op", read}, {"plan-ms/op", planning}, {"apply-ms/op", applying}} {
		b.ReportMetric(float64(ph.d.Milliseconds())/float64(b.N), ph.unit)
	}
}

// fileWriter is apply.ProcWriter on a fixture: procfs replaces the
// whole mask on every write, a regular file keeps a longer old tail, so
// it empties the file first and then writes as the daemon does.
type fileWriter struct{ proc string }

func (w fileWriter) WriteAffinity(irq int, m cpumask.Mask) error {
	if err := os.Truncate(filepath.Join(w.proc, "irq", fmt.Sprint(irq), "smp_affinity_list"), 0); err != nil {
		return err
	}
	return apply.ProcWriter{Proc: w.proc}.WriteAffinity(irq, m)
}

// breakCPU rewrites the IRQs placed on CPU c as the kernel leaves them
// when c goes offline: on every online CPU. The benchmark's CPU comes
// back before the round (an online event), so the round writes them.
func breakCPU(b *testing.B, roots string, c int) {
	n := 0
	dir := filepath.Join(roots, "irq")
	ents, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	want := fmt.Sprint(c) + "\n"
	for _, e := range ents {
		p := filepath.Join(dir, e.Name(), "smp_affinity_list")
		if got, err := os.ReadFile(p); err == nil && string(got) == want {
			if err := os.WriteFile(p, []byte(fmt.Sprintf("0-%d\n", fakesys.ScaleCPUs-1)), 0o644); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	if n == 0 {
		b.Fatalf("no IRQ on CPU %d", c)
	}
}

// BenchmarkRoundAfterCPUEvent is the round after a CPU came back on
// the scale host: topology, every device IRQ's affinity, the plan, and
// the writes of the IRQs the kernel had moved off it (32: the plan
// gives each of the 256 CPUs 32 queues).
func BenchmarkRoundAfterCPUEvent(b *testing.B) {
	roundBench(b, watch.ScopeCPU, nil, func(tr *fakesys.Tree, i int) { breakCPU(b, tr.Proc(), 1+i%(fakesys.ScaleCPUs-1)) })
}

// BenchmarkRoundAfterDeviceEvent is the round after one NIC's uevent:
// also /proc/interrupts and the devices, and that NIC's IRQs read whole.
func BenchmarkRoundAfterDeviceEvent(b *testing.B) {
	roundBench(b, watch.ScopeDevices, []string{fakesys.ScaleBDF(7)}, func(*fakesys.Tree, int) {})
}

// BenchmarkRoundResync is the periodic safety net: everything read
// afresh.
func BenchmarkRoundResync(b *testing.B) {
	roundBench(b, watch.ScopeAll, nil, func(*fakesys.Tree, int) {})
}
