package machine_test

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
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/policy"
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

// TestReadKeepsWhatTheKernelShowsUnchanged: after a CPU went offline
// the read re-reads topology and affinities and nothing else, taking
// the online CPUs as the inventory's; a read whose /proc/interrupts
// disagrees with the topology is read again afresh and reported
// inconsistent.
func TestReadKeepsWhatTheKernelShowsUnchanged(t *testing.T) {
	tr := fakesys.NewQEMUGuestNIC(t, true)
	r := machine.NewReader(machine.Roots{Sys: tr.Sys(), Proc: tr.Proc()})
	cfg := config.Default()
	if m, err := r.Read(cfg, inventory.DepthAffinities, nil); err != nil || !m.Consistent || m.Depth != inventory.DepthAll {
		t.Fatalf("first read: %+v, %v; want a consistent whole read", m, err)
	}
	offlineCPUs6and7(tr)
	m, err := r.Read(cfg, inventory.DepthAffinities, nil)
	if err != nil || !m.Consistent || m.Depth != inventory.DepthAffinities {
		t.Fatalf("read after the CPUs went: consistent %v, depth %v, %v; want consistent, affinities", m.Consistent, m.Depth, err)
	}
	if got := m.Inventory.CPUs.String(); got != "0-5" || m.Snapshot.Online().String() != "0-5" {
		t.Errorf("CPUs: inventory %s, topology %s; want 0-5 for both", got, m.Snapshot.Online())
	}
	if q, _ := m.Inventory.IRQ(25); q.Affinity.String() != "0-5" {
		t.Errorf("IRQ 25 = %s, want the broken 0-5 re-read", q.Affinity)
	}
	// A new IRQ makes the inventory re-read /proc/interrupts, whose 8
	// columns disagree with the 6 online CPUs: read again afresh.
	tr.AddIRQ(fakesys.IRQSpec{Number: 40, Name: "virtio0-config2", Affinity: "0-5"})
	m, err = r.Read(cfg, inventory.DepthAffinities, nil)
	if err != nil || m.Consistent || m.Depth != inventory.DepthAll {
		t.Errorf("8-column /proc/interrupts on 6 CPUs: consistent %v, depth %v, %v; want false, all", m.Consistent, m.Depth, err)
	}
}

// roundBench runs a whole round (read, plan, apply through procfs
// writes into the fixture) on the scale host under scope, with prepare
// run, untimed, before each.
func roundBench(b *testing.B, least inventory.Depth, prepare func(tr *fakesys.Tree, i int)) {
	tr := fakesys.New(b)
	tr.AddScaleHost()
	roots := machine.Roots{Sys: tr.Sys(), Proc: tr.Proc()}
	r := machine.NewReader(roots)
	a := apply.New(fileWriter{roots.Proc}, zap.NewNop(), apply.Options{})
	cfg := config.Default()
	var mem policy.Memory
	var read, planning, applying time.Duration
	round := func() apply.Result {
		m, err := r.Read(cfg, least, nil)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		p := policy.Compute(m.Snapshot, m.Inventory, cfg, m.ToolBans(), mem, policy.Balancing{})
		planned := time.Now()
		var res apply.Result
		res, mem = a.Apply(b.Context(), p, mem)
		read, planning, applying = read+m.Took, planning+planned.Sub(start), applying+time.Since(planned)
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

func (w fileWriter) PinThread(pid int, _ string, m cpumask.Mask) error {
	return fakesys.PinThread(w.proc, pid, m)
}

func (w fileWriter) WriteXPS(iface string, queue int, m cpumask.Mask) error {
	sys := filepath.Join(filepath.Dir(w.proc), "sys")
	path := filepath.Join(sys, "class", "net", iface, "queues", fmt.Sprintf("tx-%d", queue), "xps_cpus")
	if err := os.Truncate(path, 0); err != nil {
		return err
	}
	return apply.ProcWriter{Sys: sys}.WriteXPS(iface, queue, m)
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
	roundBench(b, inventory.DepthAffinities, func(tr *fakesys.Tree, i int) { breakCPU(b, tr.Proc(), 1+i%(fakesys.ScaleCPUs-1)) })
}

// BenchmarkRoundAfterDeviceEvent is the round after a device event that
// the kernel shows: an interface came or went, so /proc/interrupts and
// the devices are read again, with the facts of unchanged IRQs and
// devices kept.
func BenchmarkRoundAfterDeviceEvent(b *testing.B) {
	roundBench(b, inventory.DepthAffinities, func(tr *fakesys.Tree, i int) {
		if i%2 == 0 {
			tr.Symlink("../../devices/virtual/net/dummy0", "sys/class/net/dummy0")
		} else {
			tr.Remove("sys/class/net/dummy0")
		}
	})
}

// BenchmarkRoundResync is the periodic safety net: everything read
// afresh.
func BenchmarkRoundResync(b *testing.B) {
	roundBench(b, inventory.DepthAll, func(*fakesys.Tree, int) {})
}
