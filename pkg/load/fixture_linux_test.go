package load

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/config"
)

// halfLife is the one the daemon passes by default.
const halfLife = config.DefaultLoadHalfLife

// irqRow is a queue IRQ of the fixture NIC at 0000:41:00.0: vector k is
// "k-edge", named name.
func irqRow(irq, k int, name string, counts ...uint64) fakesys.InterruptRow {
	return fakesys.InterruptRow{IRQ: irq, Chip: "IR-PCI-MSIX-0000:41:00.0", HWIRQ: fmt.Sprint(k, "-edge"), Name: name, Counts: counts}
}

// rig is a fixture tree and a Sampler of it; samples are taken at t0
// plus an offset.
type rig struct {
	tr *fakesys.Tree
	s  *Sampler
	t0 time.Time
}

// newRig samples with cfg, and halfLife if cfg gives none.
func newRig(t *testing.T, cfg Config) *rig {
	if cfg.HalfLife == 0 {
		cfg.HalfLife = halfLife
	}
	tr := fakesys.New(t)
	return &rig{tr: tr, s: NewSampler(FS{Proc: tr.Proc()}, cfg), t0: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
}

// sample writes the state (stat lines, the interrupts header CPUs and
// rows) and samples it at t0+at.
func (r *rig) sample(t *testing.T, at time.Duration, stat []ticks, cpus []int, rows ...fakesys.InterruptRow) Loads {
	t.Helper()
	writeStat(r.tr, stat...)
	r.tr.AddInterrupts(cpus, rows...)
	l, err := r.s.Sample(r.t0.Add(at))
	if err != nil {
		t.Fatalf("Sample at %v: %v", at, err)
	}
	return l
}

func mustIRQ(t *testing.T, l Loads, irq int) IRQLoad {
	t.Helper()
	q, ok := l.IRQ(irq)
	if !ok {
		t.Fatalf("sample at %v has no IRQ %d", l.Time, irq)
	}
	return q
}

// cpuLoad returns the load of cpu, false when l has no such CPU.
func cpuLoad(l Loads, cpu int) (CPULoad, bool) {
	i := slices.IndexFunc(l.CPUs, func(c CPULoad) bool { return c.CPU == cpu })
	if i < 0 {
		return CPULoad{}, false
	}
	return l.CPUs[i], true
}

func mustCPU(t *testing.T, l Loads, cpu int) CPULoad {
	t.Helper()
	c, ok := cpuLoad(l, cpu)
	if !ok {
		t.Fatalf("sample at %v has no CPU %d", l.Time, cpu)
	}
	return c
}

// near says whether got is want to 1e-12, relatively for large values.
func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want))
}

func checkNear(t *testing.T, what string, got, want float64) {
	t.Helper()
	if !near(got, want) {
		t.Errorf("%s = %.15g, want %.15g", what, got, want)
	}
}
