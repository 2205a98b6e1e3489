package load

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

var both = []int{0, 1}

// TestFirstSampleNotReady checks that one sample gives no rates: it has
// no deltas, and says so.
func TestFirstSampleNotReady(t *testing.T) {
	r := newRig(t, Config{})
	l := r.sample(t, 0, []ticks{{0, 1000, 10, 20}, {1, 1000, 0, 5}}, both,
		irqRow(24, 0, "eth0-0", 5000, 7), irqRow(25, 1, "eth0-1", 0, 9000))
	if l.Ready || l.Interval != 0 || !l.Time.Equal(r.t0) {
		t.Errorf("first sample: Ready %v, Interval %v, Time %v; want not ready, 0, %v", l.Ready, l.Interval, l.Time, r.t0)
	}
	if !l.TimeAccounting {
		t.Error("TimeAccounting false with hardirq ticks since boot")
	}
	if len(l.CPUs) != 2 || len(l.IRQs) != 2 {
		t.Fatalf("%d CPUs, %d IRQs; want 2, 2", len(l.CPUs), len(l.IRQs))
	}
	for _, c := range l.CPUs {
		if c.Ready || c.Load != 0 || c.Unattributed != 0 {
			t.Errorf("CPU %+v, want not ready and zero", c)
		}
	}
	for _, q := range l.IRQs {
		if q.Ready || q.Rate != 0 || q.Load != 0 {
			t.Errorf("IRQ %+v, want not ready and zero", q)
		}
	}
	q := mustIRQ(t, l, 25)
	if q.Chip != "IR-PCI-MSIX-0000:41:00.0" || q.HWIRQ != "1-edge" || len(q.Actions) != 1 || q.Actions[0] != "eth0-1" {
		t.Errorf("IRQ 25 identity %q %q %q", q.Chip, q.HWIRQ, q.Actions)
	}
	if _, ok := l.IRQ(26); ok {
		t.Error("IRQ 26 found in a sample without it")
	}
	if _, ok := cpuLoad(l, 2); ok {
		t.Error("CPU 2 found in a sample without it")
	}
}

// TestTwoAndThreeSamples follows two IRQs on two CPUs over two uneven
// intervals and checks every value against a hand computation.
func TestTwoAndThreeSamples(t *testing.T) {
	r := newRig(t, Config{})
	r.sample(t, 0, []ticks{{0, 10000, 100, 200}, {1, 10000, 50, 50}}, both,
		irqRow(24, 0, "eth0-0", 5000, 0), irqRow(25, 1, "eth0-1", 100, 200))

	// 10 s of 1000 ticks each. CPU 0: 100 ticks of irq+softirq (0.1),
	// CPU 1: 50 (0.05). IRQ 24: +1000 on CPU 0; IRQ 25: +300 on CPU 0,
	// +700 on CPU 1.
	l := r.sample(t, 10*time.Second, []ticks{{0, 10900, 140, 260}, {1, 10950, 70, 80}}, both,
		irqRow(24, 0, "eth0-0", 6000, 0), irqRow(25, 1, "eth0-1", 400, 900))
	if !l.Ready || l.Interval != 10*time.Second || !l.TimeAccounting {
		t.Fatalf("second sample: Ready %v, Interval %v, TimeAccounting %v", l.Ready, l.Interval, l.TimeAccounting)
	}
	// The first interval is the average as it is.
	load24 := 0.1 * 1000 / 1300
	load25 := 0.1*300/1300 + 0.05*700/700
	q24, q25 := mustIRQ(t, l, 24), mustIRQ(t, l, 25)
	checkNear(t, "IRQ 24 rate", q24.Rate, 100)
	checkNear(t, "IRQ 25 rate", q25.Rate, 100)
	checkNear(t, "IRQ 24 load", q24.Load, load24)
	checkNear(t, "IRQ 25 load", q25.Load, load25)
	c0, c1 := mustCPU(t, l, 0), mustCPU(t, l, 1)
	checkNear(t, "CPU 0 load", c0.Load, 0.1)
	checkNear(t, "CPU 1 load", c1.Load, 0.05)
	if !q24.Ready || !q25.Ready || !c0.Ready || !c1.Ready || c0.Unattributed != 0 || c1.Unattributed != 0 {
		t.Errorf("second sample: %+v %+v %+v %+v", q24, q25, c0, c1)
	}
	checkSums(t, l)

	// 20 s later, 2000 ticks each. CPU 0: 400 ticks (0.2), all of
	// IRQ 24's (+4000); CPU 1: 100 ticks (0.05) and no interrupt, so
	// unattributed.
	l = r.sample(t, 30*time.Second, []ticks{{0, 12500, 240, 560}, {1, 12850, 110, 140}}, both,
		irqRow(24, 0, "eth0-0", 10000, 0), irqRow(25, 1, "eth0-1", 400, 900))
	if l.Interval != 20*time.Second {
		t.Errorf("Interval %v, want 20s", l.Interval)
	}
	w := 1 - math.Pow(2, -20.0/30) // half-life 30 s
	checkNear(t, "w(20s)", w, 0.3700394750525634)
	q24, q25 = mustIRQ(t, l, 24), mustIRQ(t, l, 25)
	checkNear(t, "IRQ 24 rate", q24.Rate, 100+w*(200-100))
	checkNear(t, "IRQ 25 rate", q25.Rate, 100+w*(0-100))
	checkNear(t, "IRQ 24 load", q24.Load, load24+w*(0.2-load24))
	checkNear(t, "IRQ 25 load", q25.Load, load25+w*(0-load25))
	c0, c1 = mustCPU(t, l, 0), mustCPU(t, l, 1)
	checkNear(t, "CPU 0 load", c0.Load, 0.1+w*(0.2-0.1))
	checkNear(t, "CPU 1 load", c1.Load, 0.05)
	checkNear(t, "CPU 0 unattributed", c0.Unattributed, 0)
	checkNear(t, "CPU 1 unattributed", c1.Unattributed, w*0.05)
	checkSums(t, l)
}

// checkSums checks that the IRQs' loads and the unattributed time add
// up to the CPUs' loads, as long as no IRQ or CPU came or went.
func checkSums(t *testing.T, l Loads) {
	t.Helper()
	var irqs, cpus, unattr float64
	for _, q := range l.IRQs {
		irqs += q.Load
	}
	for _, c := range l.CPUs {
		cpus += c.Load
		unattr += c.Unattributed
	}
	if !near(irqs+unattr, cpus) {
		t.Errorf("IRQ loads %.15g + unattributed %.15g != CPU loads %.15g", irqs, unattr, cpus)
	}
}

// TestReRequestedIRQRestarts checks that an IRQ number whose row changed
// identity is a new IRQ: no rate, whatever its counts did, and a fresh
// average once it has one.
func TestReRequestedIRQRestarts(t *testing.T) {
	for _, tc := range []struct {
		name string
		row  fakesys.InterruptRow // IRQ 24 in the second sample
	}{
		{"other actions", irqRow(24, 0, "eth1-0", 7000, 0)},
		{"an action added", irqRow(24, 0, "eth0-0, eth0-0-xdp", 7000, 0)},
		{"other hwirq", irqRow(24, 3, "eth0-0", 7000, 0)},
		{"other chip", fakesys.InterruptRow{IRQ: 24, Chip: "IR-PCI-MSIX-0000:81:00.0", HWIRQ: "0-edge", Name: "eth0-0", Counts: []uint64{7000, 0}}},
		{"counts restarted", irqRow(24, 0, "eth1-0", 10, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Config{})
			stat := func(idle, irq, soft uint64) []ticks { return []ticks{{0, idle, irq, soft}, {1, 10000, 10, 10}} }
			r.sample(t, 0, stat(10000, 100, 100), both, irqRow(24, 0, "eth0-0", 5000, 0), irqRow(25, 1, "eth0-1", 0, 0))
			l := r.sample(t, 10*time.Second, stat(10900, 150, 150), both, irqRow(24, 0, "eth0-0", 6000, 0), irqRow(25, 1, "eth0-1", 0, 0))
			if q := mustIRQ(t, l, 24); !q.Ready || !near(q.Rate, 100) || !near(q.Load, 0.1) {
				t.Fatalf("before: IRQ 24 %+v, want rate 100, load 0.1", q)
			}
			// IRQ 25 fires 100 times on CPU 0 as IRQ 24 changes.
			row25 := irqRow(25, 1, "eth0-1", 100, 0)
			l = r.sample(t, 20*time.Second, stat(11800, 200, 200), both, tc.row, row25)
			q := mustIRQ(t, l, 24)
			if q.Ready || q.Rate != 0 || q.Load != 0 {
				t.Errorf("restarted IRQ 24 %+v, want not ready, rate and load 0", q)
			}
			// CPU 0's time (0.1) goes to the one IRQ with a delta
			// there, which had 0 so far.
			checkNear(t, "IRQ 25 load", mustIRQ(t, l, 25).Load, weight(10*time.Second, halfLife)*0.1)

			next := tc.row
			next.Counts = []uint64{tc.row.Counts[0] + 500, 0}
			l = r.sample(t, 30*time.Second, stat(12700, 250, 250), both, next, row25)
			q = mustIRQ(t, l, 24)
			if !q.Ready || !near(q.Rate, 50) || !near(q.Load, 0.1) {
				t.Errorf("after the restart: IRQ 24 %+v, want a fresh average: rate 50, load 0.1", q)
			}
		})
	}
}

// TestCountGoesBackwards checks that a count that went down on a CPU
// online throughout (a wrapped 32-bit kstat_irqs, or a descriptor
// reallocated under the same name) gives no delta for that interval,
// never a negative or huge rate, and that the next interval counts from
// the new value.
func TestCountGoesBackwards(t *testing.T) {
	r := newRig(t, Config{})
	stat := func(i uint64) []ticks {
		return []ticks{{0, 10000 + 900*i, 100 + 50*i, 100 + 50*i}, {1, 10000 + 1000*i, 0, 0}}
	}
	r.sample(t, 0, stat(0), both, irqRow(24, 0, "eth0-0", 4294966296, 10))
	l := r.sample(t, 10*time.Second, stat(1), both, irqRow(24, 0, "eth0-0", 4294967295, 10))
	checkNear(t, "rate before", mustIRQ(t, l, 24).Rate, 99.9)

	// CPU 0's count wraps past 2^32.
	l = r.sample(t, 20*time.Second, stat(2), both, irqRow(24, 0, "eth0-0", 2000, 10))
	q := mustIRQ(t, l, 24)
	if !q.Ready || !near(q.Rate, 99.9) || !near(q.Load, 0.1) {
		t.Errorf("after the wrap: IRQ 24 %+v, want its average unchanged (rate 99.9, load 0.1)", q)
	}
	// No IRQ took CPU 0's time in that interval: it is unattributed.
	w := weight(10*time.Second, halfLife)
	checkNear(t, "CPU 0 unattributed", mustCPU(t, l, 0).Unattributed, w*0.1)

	l = r.sample(t, 30*time.Second, stat(3), both, irqRow(24, 0, "eth0-0", 5000, 10))
	rate := 99.9 + w*(300-99.9)
	checkNear(t, "rate after", mustIRQ(t, l, 24).Rate, rate)

	// A jump of 2^33 in one interval is no 32-bit count's: skipped too.
	l = r.sample(t, 40*time.Second, stat(4), both, irqRow(24, 0, "eth0-0", 5000+1<<33, 10))
	checkNear(t, "rate after a 2^33 jump", mustIRQ(t, l, 24).Rate, rate)
}

// TestCPUOfflineAndBack checks that a CPU going offline (no /proc/stat
// line, no /proc/interrupts column) neither restarts the IRQs nor gives
// them a negative rate, is forgotten, and counts again once it has been
// back for a whole interval.
func TestCPUOfflineAndBack(t *testing.T) {
	r := newRig(t, Config{})
	w := weight(10*time.Second, halfLife)
	r.sample(t, 0, []ticks{{0, 10000, 100, 100}, {1, 10000, 100, 100}}, both, irqRow(24, 0, "eth0-0", 100, 100))
	l := r.sample(t, 10*time.Second, []ticks{{0, 10900, 150, 150}, {1, 10800, 200, 200}}, both, irqRow(24, 0, "eth0-0", 200, 300))
	rate := 30.0
	checkNear(t, "rate, both online", mustIRQ(t, l, 24).Rate, rate)
	checkNear(t, "CPU 1 load", mustCPU(t, l, 1).Load, 0.2)

	// CPU 1 goes offline: its count of 300 is no longer printed.
	l = r.sample(t, 20*time.Second, []ticks{{0, 11800, 200, 200}}, []int{0}, irqRow(24, 0, "eth0-0", 250))
	q := mustIRQ(t, l, 24)
	rate += w * (5 - rate)
	if !q.Ready || !near(q.Rate, rate) {
		t.Errorf("CPU 1 offline: IRQ 24 %+v, want rate %v from CPU 0's 50", q, rate)
	}
	if _, ok := cpuLoad(l, 1); ok || len(l.CPUs) != 1 {
		t.Errorf("CPU 1 offline is in the sample: %+v", l.CPUs)
	}

	// CPU 1 is back, its column with the count it kept (300) and 700
	// since: not part of this interval's rate.
	l = r.sample(t, 30*time.Second, []ticks{{0, 12700, 250, 250}, {1, 10900, 250, 250}}, both, irqRow(24, 0, "eth0-0", 300, 1000))
	rate += w * (5 - rate)
	checkNear(t, "rate, CPU 1 just back", mustIRQ(t, l, 24).Rate, rate)
	if c := mustCPU(t, l, 1); c.Ready || c.Load != 0 {
		t.Errorf("CPU 1 just back: %+v, want not ready", c)
	}

	l = r.sample(t, 40*time.Second, []ticks{{0, 13600, 300, 300}, {1, 11500, 450, 450}}, both, irqRow(24, 0, "eth0-0", 400, 1100))
	rate += w * (20 - rate)
	checkNear(t, "rate, CPU 1 back a whole interval", mustIRQ(t, l, 24).Rate, rate)
	c := mustCPU(t, l, 1)
	if !c.Ready {
		t.Errorf("CPU 1 back a whole interval: %+v, want ready", c)
	}
	// Forgotten while offline: its average starts afresh at 0.4.
	checkNear(t, "CPU 1 load", c.Load, 0.4)
}

// TestCPUInOneFileOnly checks a CPU caught by a hotplug between the two
// reads: a column in /proc/interrupts but no /proc/stat line yet. Its
// time since boot is not an interval's, so it stays not ready until it
// has a line at both ends.
func TestCPUInOneFileOnly(t *testing.T) {
	r := newRig(t, Config{})
	r.sample(t, 0, []ticks{{0, 10000, 100, 100}}, both, irqRow(24, 0, "eth0-0", 100, 100))
	l := r.sample(t, 10*time.Second, []ticks{{0, 10900, 150, 150}, {1, 50000, 400, 400}}, both, irqRow(24, 0, "eth0-0", 200, 300))
	if c := mustCPU(t, l, 1); c.Ready || c.Load != 0 {
		t.Errorf("CPU 1 with its first stat line: %+v, want not ready", c)
	}
	// Its interrupts still count in the rate; CPU 0's time is IRQ 24's.
	q := mustIRQ(t, l, 24)
	checkNear(t, "IRQ 24 rate", q.Rate, 30)
	checkNear(t, "IRQ 24 load", q.Load, 0.1)
	l = r.sample(t, 20*time.Second, []ticks{{0, 11800, 200, 200}, {1, 50800, 500, 500}}, both, irqRow(24, 0, "eth0-0", 300, 400))
	checkNear(t, "CPU 1 load", mustCPU(t, l, 1).Load, 0.2)
}

// TestAccountingOffFallback checks a kernel without irq time
// accounting: no hardirq time since boot, so the loads are the rates
// times the interrupt cost.
func TestAccountingOffFallback(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		cost float64
	}{
		{Config{}, 5e-6},
	} {
		r := newRig(t, tc.cfg)
		l := r.sample(t, 0, []ticks{{0, 10000, 0, 0}, {1, 10000, 0, 0}}, both,
			irqRow(24, 0, "eth0-0", 100, 0), irqRow(25, 1, "eth0-1", 100, 100))
		if l.TimeAccounting {
			t.Error("first sample: TimeAccounting with no hardirq time since boot")
		}
		l = r.sample(t, 10*time.Second, []ticks{{0, 11000, 0, 0}, {1, 11000, 0, 0}}, both,
			irqRow(24, 0, "eth0-0", 1100, 0), irqRow(25, 1, "eth0-1", 600, 600))
		if l.TimeAccounting || !l.Ready {
			t.Fatalf("TimeAccounting %v, Ready %v; want false, true", l.TimeAccounting, l.Ready)
		}
		q24, q25 := mustIRQ(t, l, 24), mustIRQ(t, l, 25)
		checkNear(t, "IRQ 24 rate", q24.Rate, 100)
		checkNear(t, "IRQ 24 load", q24.Load, 100*tc.cost)
		checkNear(t, "IRQ 25 rate", q25.Rate, 100)
		checkNear(t, "IRQ 25 load", q25.Load, 100*tc.cost)
		c0, c1 := mustCPU(t, l, 0), mustCPU(t, l, 1)
		checkNear(t, "CPU 0 load", c0.Load, 150*tc.cost)
		checkNear(t, "CPU 1 load", c1.Load, 50*tc.cost)
		if c0.Unattributed != 0 || c1.Unattributed != 0 {
			t.Errorf("unattributed %v %v without accounting, want 0", c0.Unattributed, c1.Unattributed)
		}
		checkSums(t, l)
	}
}

// TestAccountingTurnsOff checks the run-time decision: irq and softirq
// time that stop rising while a CPU takes accountingOffAfter interrupts
// turn the fallback on, and a tick of either turns it off again.
func TestAccountingTurnsOff(t *testing.T) {
	r := newRig(t, Config{})
	stat := func(i, irq, soft uint64) []ticks {
		// The fake's total adds irq and softirq: CPU 0 runs 1000 ticks
		// an interval.
		return []ticks{{0, 10540 + 1000*i - irq - soft, irq, soft}, {1, 10000 + 1000*i, 0, 0}}
	}
	step := uint64(accountingOffAfter * 6 / 10)
	row := func(i uint64) fakesys.InterruptRow { return irqRow(24, 0, "eth0-0", i*step, 0) }
	if l := r.sample(t, 0, stat(0, 40, 500), both, row(0)); !l.TimeAccounting {
		t.Fatal("first sample: no TimeAccounting with interrupt time since boot")
	}
	// Softirq ticks alone are measured time (a kernel without
	// CONFIG_IRQ_TIME_ACCOUNTING): the 10 of 1000 are IRQ 24's.
	l := r.sample(t, 10*time.Second, stat(1, 40, 510), both, row(1))
	if !l.TimeAccounting {
		t.Fatal("TimeAccounting off while softirq time rises")
	}
	checkNear(t, "IRQ 24 load, softirq ticks", mustIRQ(t, l, 24).Load, 0.01)
	w := weight(10*time.Second, halfLife)
	l = r.sample(t, 20*time.Second, stat(2, 40, 510), both, row(2))
	if !l.TimeAccounting {
		t.Fatalf("TimeAccounting off after %d quiet interrupts, before the %d that decide", step, accountingOffAfter)
	}
	v2 := 0.01 + w*(0-0.01)
	checkNear(t, "IRQ 24 load, no tick this interval", mustIRQ(t, l, 24).Load, v2)
	l = r.sample(t, 30*time.Second, stat(3, 40, 510), both, row(3))
	if l.TimeAccounting {
		t.Fatalf("TimeAccounting still on after %d interrupts on CPU 0 and no irq or softirq tick", 2*step)
	}
	rate := float64(step) / 10
	checkNear(t, "IRQ 24 load, fallback", mustIRQ(t, l, 24).Load, v2+w*(rate*5e-6-v2))
	if l = r.sample(t, 40*time.Second, stat(4, 41, 510), both, row(4)); !l.TimeAccounting {
		t.Error("TimeAccounting still off after a hardirq tick")
	}
}

// TestIRQCPU checks IRQLoad.CPU: where most interrupts of the latest
// interval with any landed, kept through an interval without.
func TestIRQCPU(t *testing.T) {
	r := newRig(t, Config{})
	tk := []ticks{{0, 10000, 10, 10}, {1, 10000, 10, 10}}
	if q := mustIRQ(t, r.sample(t, 0, tk, both, irqRow(24, 0, "eth0-0", 5, 5)), 24); q.CPU != -1 {
		t.Errorf("first sample: CPU %d, want -1", q.CPU)
	}
	if q := mustIRQ(t, r.sample(t, time.Second, tk, both, irqRow(24, 0, "eth0-0", 6, 50)), 24); q.CPU != 1 {
		t.Errorf("after 1+45 interrupts on CPUs 0, 1: CPU %d, want 1", q.CPU)
	}
	if q := mustIRQ(t, r.sample(t, 2*time.Second, tk, both, irqRow(24, 0, "eth0-0", 6, 50)), 24); q.CPU != 1 {
		t.Errorf("after an interval without interrupts: CPU %d, want 1 still", q.CPU)
	}
	if q := mustIRQ(t, r.sample(t, 3*time.Second, tk, both, irqRow(24, 0, "eth0-0", 90, 51)), 24); q.CPU != 0 {
		t.Errorf("after 84+1 interrupts on CPUs 0, 1: CPU %d, want 0", q.CPU)
	}
}

// TestUnattributed checks that irq+softirq time on a CPU where no IRQ
// fired stays the CPU's, and that an IRQ that fired elsewhere gets none
// of it.
func TestUnattributed(t *testing.T) {
	r := newRig(t, Config{})
	r.sample(t, 0, []ticks{{0, 10000, 10, 10}, {1, 10000, 10, 10}}, both, irqRow(24, 0, "eth0-0", 0, 0))
	l := r.sample(t, 10*time.Second, []ticks{{0, 10700, 110, 210}, {1, 10980, 20, 20}}, both, irqRow(24, 0, "eth0-0", 0, 50))
	c0, c1 := mustCPU(t, l, 0), mustCPU(t, l, 1)
	checkNear(t, "CPU 0 load", c0.Load, 0.3)
	checkNear(t, "CPU 0 unattributed", c0.Unattributed, 0.3)
	checkNear(t, "CPU 1 load", c1.Load, 0.02)
	checkNear(t, "CPU 1 unattributed", c1.Unattributed, 0)
	checkNear(t, "IRQ 24 load", mustIRQ(t, l, 24).Load, 0.02)
	checkSums(t, l)
}

// TestForgetsVanishedIRQ checks that an IRQ gone from /proc/interrupts
// leaves no history: if it comes back, even under the same identity, it
// starts afresh.
func TestForgetsVanishedIRQ(t *testing.T) {
	r := newRig(t, Config{})
	st := func(i uint64) []ticks { return []ticks{{0, 10000 + 1000*i, 10, 10}, {1, 10000 + 1000*i, 10, 10}} }
	r.sample(t, 0, st(0), both, irqRow(24, 0, "eth0-0", 0, 0), irqRow(25, 1, "eth0-1", 0, 0))
	r.sample(t, 10*time.Second, st(1), both, irqRow(24, 0, "eth0-0", 10, 0), irqRow(25, 1, "eth0-1", 10, 0))
	l := r.sample(t, 20*time.Second, st(2), both, irqRow(24, 0, "eth0-0", 20, 0))
	if _, ok := l.IRQ(25); ok || len(l.IRQs) != 1 || len(r.s.irqs) != 1 || len(r.s.ints.Rows) != 1 {
		t.Fatalf("IRQ 25 gone: %d IRQs in the sample, %d kept", len(l.IRQs), len(r.s.irqs))
	}
	l = r.sample(t, 30*time.Second, st(3), both, irqRow(24, 0, "eth0-0", 30, 0), irqRow(25, 1, "eth0-1", 30, 0))
	if q := mustIRQ(t, l, 25); q.Ready {
		t.Errorf("IRQ 25 back: %+v, want a new IRQ", q)
	}
}

// TestFailedSampleChangesNothing checks that a read error, or a time not
// after the previous sample's, leaves the state as it was, so the next
// sample spans the whole time since the last good one.
func TestFailedSampleChangesNothing(t *testing.T) {
	r := newRig(t, Config{})
	st := func(i uint64) []ticks {
		return []ticks{{0, 10000 + 1000*i, 10 + 10*i, 10}, {1, 10000 + 1000*i, 10, 10}}
	}
	r.sample(t, 0, st(0), both, irqRow(24, 0, "eth0-0", 0, 0))

	if _, err := r.s.Sample(r.t0); err == nil || !strings.Contains(err.Error(), "is not after the previous one") {
		t.Errorf("same time again: err = %v", err)
	}
	writeStat(r.tr, st(1)...)
	r.tr.WriteFile("proc/interrupts", "  CPU0 CPU1\n 24: 1 2 3 IR-PCI-MSIX 0-edge eth0-0\n")
	_, err := r.s.Sample(r.t0.Add(10 * time.Second))
	if !errors.Is(err, kernfs.ErrMalformed) || !strings.Contains(err.Error(), "read "+r.tr.Proc()+"/interrupts: line 2") {
		t.Errorf("malformed interrupts: err = %v", err)
	}
	r.tr.Remove("proc/stat")
	r.tr.AddInterrupts(both, irqRow(24, 0, "eth0-0", 5, 0))
	if _, err := r.s.Sample(r.t0.Add(15 * time.Second)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no stat: err = %v, want fs.ErrNotExist", err)
	}

	l := r.sample(t, 30*time.Second, st(3), both, irqRow(24, 0, "eth0-0", 600, 0))
	if l.Interval != 30*time.Second {
		t.Errorf("Interval %v, want 30s since the last good sample", l.Interval)
	}
	checkNear(t, "rate over 30 s", mustIRQ(t, l, 24).Rate, 20)
	checkNear(t, "CPU 0 load over 30 s", mustCPU(t, l, 0).Load, 30.0/3030)
}

// TestNewSamplerNeedsHalfLife: a zero half-life is a caller's bug, not
// a silent default.
func TestNewSamplerNeedsHalfLife(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "HalfLife 0s (want more than 0)") {
			t.Errorf("NewSampler with HalfLife 0: recovered %v, want a panic naming it", r)
		}
	}()
	NewSampler(FS{}, Config{})
}

// TestReadInterruptsBadFiles: a FIFO in place of /proc/interrupts is
// refused without blocking (the size bound is the inventory's, tested
// there).
func TestReadInterruptsBadFiles(t *testing.T) {
	tr := fakesys.New(t)
	fsys := FS{Proc: tr.Proc()}
	if err := syscall.Mkfifo(tr.Path("proc/interrupts"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error)
	go func() {
		_, err := fsys.ReadInterrupts()
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, kernfs.ErrMalformed) || !strings.Contains(err.Error(), "proc/interrupts: malformed: not a regular file (a named pipe)") {
			t.Errorf("FIFO: err = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadInterrupts blocked on a FIFO")
	}
}

// TestUnevenIntervalsEWMA checks the average through the sampler over
// intervals of 10, 30 and 5 s against a hand computation, with a
// half-life of 30 s.
func TestUnevenIntervalsEWMA(t *testing.T) {
	r := newRig(t, Config{HalfLife: 30 * time.Second})
	st := func(i uint64) []ticks { return []ticks{{0, 10000 + 1000*i, 0, 0}} }
	cpu0 := []int{0}
	r.sample(t, 0, st(0), cpu0, irqRow(24, 0, "eth0-0", 0))
	r.sample(t, 10*time.Second, st(1), cpu0, irqRow(24, 0, "eth0-0", 1000))          // 100/s
	r.sample(t, 40*time.Second, st(2), cpu0, irqRow(24, 0, "eth0-0", 1000+6000))     // 200/s over 30 s
	l := r.sample(t, 45*time.Second, st(3), cpu0, irqRow(24, 0, "eth0-0", 7000+250)) // 50/s over 5 s
	// 100; 100 + (1-2^-1)(200-100) = 150; 150 + (1-2^(-1/6))(50-150).
	want := 150 + (1-0.8908987181403393)*(50-150)
	checkNear(t, "rate", mustIRQ(t, l, 24).Rate, want)
	checkNear(t, "rate, spelt out", mustIRQ(t, l, 24).Rate, 139.08987181403393)
}

func TestWeight(t *testing.T) {
	h := 30 * time.Second
	for _, tc := range []struct {
		dt   time.Duration
		want float64
	}{
		{30 * time.Second, 0.5},
		{60 * time.Second, 0.75},
		{10 * time.Second, 0.2062994740159002},     // 1 - 2^(-1/3)
		{5 * time.Second, 0.10910128185966073},     // 1 - 2^(-1/6)
		{time.Millisecond, 2.3104639102379475e-05}, // 1 - 2^(-1/30000), about ln2/30000
		{0, 0},
		{-time.Second, 0},
		{1000 * time.Hour, 1},
	} {
		got := weight(tc.dt, h)
		if math.Abs(got-tc.want) > 1e-12*tc.want {
			t.Errorf("weight(%v, %v) = %.17g, want %.17g", tc.dt, h, got, tc.want)
		}
	}
	// Weights compose: three 10 s steps are one 30 s step.
	one := weight(10*time.Second, h)
	if k := (1 - one) * (1 - one) * (1 - one); !near(k, 0.5) {
		t.Errorf("(1-w(10s))^3 = %.17g, want 0.5", k)
	}
	// So an average fed one value over three 10 s samples or one 30 s
	// sample ends the same.
	var a, b ewma
	a.add(0, 0)
	b.add(0, 0)
	for range 3 {
		a.add(90, one)
	}
	b.add(90, weight(30*time.Second, h))
	if !near(a.v, b.v) || !near(b.v, 45) {
		t.Errorf("three 10 s steps give %v, one 30 s step %v; want 45", a.v, b.v)
	}
}

// TestEWMASpread: the spread of a steady value is 0, and that of values
// alternating a around their mean settles near a, whatever the weight.
func TestEWMASpread(t *testing.T) {
	for _, w := range []float64{0.05, 0.13, 0.5} {
		var steady, noisy ewma
		for i := range 400 {
			steady.add(0.2, w)
			noisy.add(0.2+0.1*float64(1-2*(i%2)), w)
		}
		if steady.spread() != 0 {
			t.Errorf("w=%v: steady spread %v, want 0", w, steady.spread())
		}
		// The average itself wobbles by about w*a, which takes a little
		// from the spread around it at large weights.
		if sp := noisy.spread(); sp < 0.1*(1-w) || sp > 0.1*(1+w) {
			t.Errorf("w=%v: spread of 0.2±0.1 is %v, want about 0.1", w, sp)
		}
		if math.Abs(noisy.v-0.2) > 0.1*w {
			t.Errorf("w=%v: mean of 0.2±0.1 is %v", w, noisy.v)
		}
	}
	var one ewma
	one.add(5, 0.3)
	if one.spread() != 0 || one.v != 5 || one.noise() != 0 {
		t.Errorf("one value: mean %v spread %v noise %v, want 5, 0 and 0", one.v, one.spread(), one.noise())
	}
	// The noise of the average is the spread over the root of the
	// effective number of intervals: (2-w)/w of them in the long run.
	var long ewma
	w := 0.2
	for i := range 1000 {
		long.add(float64(i%2), w)
	}
	if got, want := long.noise(), long.spread()*math.Sqrt(w/(2-w)); math.Abs(got-want) > 1e-9 {
		t.Errorf("noise %v, want spread*sqrt(w/(2-w)) = %v", got, want)
	}
}

// FuzzSample feeds three samples of any parsable /proc/stat and
// /proc/interrupts to a Sampler and checks that no rate or load is
// negative, NaN or infinite, and that a measured CPU load stays within
// 0..1.
func FuzzSample(f *testing.F) {
	f.Add("cpu0 1 0 0 100 0 5 5 0\ncpu1 1 0 0 100 0 0 0 0\n", " CPU0 CPU1\n 24: 1 2 PCI-MSIX 0-edge eth0\n",
		"cpu0 1 0 0 200 0 9 9 0\n", " CPU0\n 24: 0 PCI-MSIX 0-edge eth1\n 25: 7 x\n",
		"cpu1 1 0 0 300 0 0 9 0\ncpu0 1 0 0 300 0 99 9 0\n", " CPU1 CPU0\n 25: 4294967295 18446744073709551615 x\n")
	f.Fuzz(func(t *testing.T, stat1, ints1, stat2, ints2, stat3, ints3 string) {
		s := NewSampler(FS{}, Config{HalfLife: halfLife})
		t0 := time.Unix(1e9, 0)
		for i, in := range [][2]string{{stat1, ints1}, {stat2, ints2}, {stat3, ints3}} {
			st, err := ParseStat(strings.NewReader(in[0]))
			if err != nil {
				return
			}
			ints, err := inventory.ParseInterrupts(strings.NewReader(in[1]))
			if err != nil {
				return
			}
			l := s.add(t0.Add(time.Duration(i)*10*time.Second), st, ints, QueueCounts{})
			bad := func(v float64) bool { return v < 0 || math.IsNaN(v) || math.IsInf(v, 0) }
			for _, q := range l.IRQs {
				if bad(q.Rate) || bad(q.Load) || !q.Ready && (q.Rate != 0 || q.Load != 0) {
					t.Fatalf("sample %d: IRQ %+v", i, q)
				}
			}
			for _, c := range l.CPUs {
				if bad(c.Load) || bad(c.Unattributed) || c.Unattributed > c.Load+1e-12 || l.TimeAccounting && c.Load > 1 {
					t.Fatalf("sample %d: CPU %+v", i, c)
				}
			}
		}
	})
}

// TestSampleNoise: an IRQ whose softirq time is the same every interval
// has no noise; one whose time alternates between 10% and 30% of its
// CPU has, and the noise of its average shrinks as intervals add up,
// towards the spread (0.1) times sqrt(w/(2-w)). Intervals counts them.
func TestSampleNoise(t *testing.T) {
	r := newRig(t, Config{HalfLife: 10 * time.Second})
	var soft0, soft1, ints0, ints1 uint64
	var noise []float64
	for i := range 40 {
		idle := uint64(200 * (i + 1)) // 2 s of ticks a sample, per CPU
		l := r.sample(t, time.Duration(i)*2*time.Second,
			[]ticks{{0, idle - soft0, 0, soft0}, {1, idle - soft1, 0, soft1}}, both,
			irqRow(24, 0, "eth0-0", ints0, 0), irqRow(25, 1, "eth0-1", 0, ints1))
		if l.Intervals != i {
			t.Fatalf("sample %d: Intervals %d", i, l.Intervals)
		}
		if i > 0 {
			if q := mustIRQ(t, l, 24); q.Noise != 0 {
				t.Fatalf("sample %d: steady IRQ's noise %v, want 0", i, q.Noise)
			}
			noise = append(noise, mustIRQ(t, l, 25).Noise)
		}
		soft0 += 40 // 20% of CPU 0, steady
		soft1 += 20 + 40*uint64(i%2)
		ints0 += 1000
		ints1 += 1000
	}
	w := weight(2*time.Second, 10*time.Second)
	if n := noise[len(noise)-1]; n < 0.08*math.Sqrt(w/(2-w)) || n > 0.12*math.Sqrt(w/(2-w)) {
		t.Errorf("noise after 39 intervals %v, want about %v", n, 0.1*math.Sqrt(w/(2-w)))
	}
	if noise[4] <= noise[len(noise)-1] {
		t.Errorf("noise after 5 intervals %v not above that after 39, %v", noise[4], noise[len(noise)-1])
	}
}
