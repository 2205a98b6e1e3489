package daemon

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/policy"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// procLoad writes /proc/stat and bumps /proc/interrupts for one
// interval of 1000 ticks on each of the fixture's 8 CPUs: fired gives,
// per IRQ, the CPU and the interrupts it takes there, soft the softirq
// ticks per CPU. Counts add up over calls, as the kernel's do.
type procLoad struct {
	tree   *fakesys.Tree
	counts map[int][]uint64 // IRQ -> per-CPU count
	soft   [8]uint64
	ticks  uint64
}

func (p *procLoad) interval(t *testing.T, fired map[int][2]uint64, soft map[int]uint64) {
	t.Helper()
	p.ticks += 1000
	var sb strings.Builder
	sb.WriteString("cpu  0 0 0 0 0 0 0 0 0 0\n")
	for c := range 8 {
		p.soft[c] += soft[c]
		fmt.Fprintf(&sb, "cpu%d 0 0 0 %d 0 0 %d 0 0 0\n", c, p.ticks-p.soft[c], p.soft[c])
	}
	writeFile(t, p.tree.Path("proc/stat"), sb.String())

	path := p.tree.Path("proc/interrupts")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for irq, f := range fired {
		if p.counts[irq] == nil {
			p.counts[irq] = make([]uint64, 8)
		}
		p.counts[irq][f[0]] += f[1]
	}
	for i, l := range lines {
		label, rest, ok := strings.Cut(l, ":")
		n, err := strconv.Atoi(strings.TrimSpace(label))
		if !ok || err != nil || p.counts[n] == nil {
			continue
		}
		fields := strings.Fields(rest)
		for c := range 8 {
			fields[c] = strconv.FormatUint(p.counts[n][c], 10)
		}
		lines[i] = fmt.Sprintf("%4d: %s", n, strings.Join(fields, " "))
	}
	writeFile(t, path, strings.Join(lines, "\n"))
}

// TestLoadRoundMovesAfterSamples: a hot managed NVMe queue shares CPU 4
// with virtio queue 0. Load balancing proposes moving the virtio queue
// to CPU 5 (the same hop), takes the proposal once it has held for
// samples rounds, writes it, counts it, and keeps it in later rounds.
func TestLoadRoundMovesAfterSamples(t *testing.T) {
	tree := fixture(t)
	w := &fileWriter{proc: tree.Proc()}
	cfg := filepath.Join(t.TempDir(), "numairqd.yaml")
	writeFile(t, cfg, "balance: load\nload_balance:\n  samples: 2\n")
	d := newDaemon(t, tree, w, cfg, nil)
	ctx := context.Background()
	if _, err := d.Round(ctx, "startup", inventory.DepthAll, time.Time{}); err != nil {
		t.Fatal(err)
	}
	pl := &procLoad{tree: tree, counts: map[int][]uint64{}}
	// Queue k's input IRQ 25+2k fires on count's CPU of queue k, 1000
	// times per interval; nvme0q5 (IRQ 45) 5000 times on CPU 4.
	fired := map[int][2]uint64{45: {4, 5000}}
	soft := map[int]uint64{4: 600}
	for k, cpu := range []int{4, 5, 6, 7, 0, 1} {
		fired[25+2*k] = [2]uint64{uint64(cpu), 1000}
		if cpu != 4 {
			soft[cpu] = 100
		}
	}
	pl.interval(t, fired, soft)
	d.loadTick(t, ctx) // primes the sampler
	// No proposal before policy.MinIntervals intervals; then the same
	// one for samples (2) rounds moves queue 0.
	for i := range policy.MinIntervals + 1 {
		pl.interval(t, fired, soft)
		d.loadTick(t, ctx)
		if got := affinity(t, tree, 25); (i < policy.MinIntervals) != (got == "4") {
			t.Fatalf("after %d load rounds IRQ 25 is on %s", i+1, got)
		}
	}
	for _, irq := range []int{25, 26} {
		if got := affinity(t, tree, irq); got != "5" {
			t.Errorf("IRQ %d (queue 0) on %s, want 5", irq, got)
		}
	}
	if got := affinity(t, tree, 27); got != "5" {
		t.Errorf("IRQ 27 (queue 1) on %s, want 5 still", got)
	}
	if n := counter(t, d, "numairqd_balance_moves_total", "reason", "load"); n != 1 {
		t.Errorf("moves{load} = %v, want 1", n)
	}
	for cpu, want := range map[string]float64{"4": 0.5, "5": 0.2, "6": 0.1} {
		if got := counter(t, d, "numairqd_cpu_irq_load", "cpu", cpu); got < want-0.01 || got > want+0.01 {
			t.Errorf("cpu_irq_load{cpu=%s} = %v, want %v", cpu, got, want)
		}
	}
	if got := counter(t, d, "numairqd_balance_peak_over_mean", "when", "before"); got < 1.5 {
		t.Errorf("peak_over_mean{before} = %v, want 0.6 over a mean of 1.1/8", got)
	}
	st := d.State()
	if b := st.Plan.Balance; b == nil || !b.Ready || b.Peak < 0.49 || b.Peak > 0.51 {
		t.Fatalf("published balance %+v, want peak 0.5", b)
	}
	// A resync keeps the move; so does the next load round, whose
	// proposal (none) moves nothing back.
	if _, err := d.Round(ctx, "resync", inventory.DepthAll, time.Time{}); err != nil {
		t.Fatal(err)
	}
	pl.interval(t, fired, soft)
	d.loadTick(t, ctx)
	if got := affinity(t, tree, 25); got != "5" {
		t.Errorf("after a resync and a load round IRQ 25 on %s, want 5", got)
	}
	if n := counter(t, d, "numairqd_balance_moves_total", "reason", "load"); n != 1 {
		t.Errorf("moves{load} = %v after a steady round, want 1", n)
	}
	// Banning CPU 5 makes the held placement leave count's CPUs: the
	// device goes back to count's placement once, and the memory holds
	// that from then on, so later rounds count no more resets.
	writeFile(t, cfg, "balance: load\nbanned_cpus: 5\nload_balance:\n  samples: 2\n")
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		st, err := d.Round(ctx, "sighup", inventory.DepthAll, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if reset := st.Plan.Balance.Reset; (i == 0) != (reset > 0) {
			t.Errorf("round %d with CPU 5 banned reset %d queues; want some in the first round only", i+1, reset)
		}
	}
}

// TestLoadRoundIdleWithCount: with balance count the load tick samples
// nothing and moves nothing.
func TestLoadRoundIdleWithCount(t *testing.T) {
	tree := fixture(t)
	w := &fileWriter{proc: tree.Proc()}
	d := newDaemon(t, tree, w, "", nil)
	if _, err := d.Round(context.Background(), "startup", inventory.DepthAll, time.Time{}); err != nil {
		t.Fatal(err)
	}
	n := w.writes()
	d.loadTick(t, context.Background())
	d.loadTick(t, context.Background())
	if d.bal.sampler != nil || w.writes() != n || d.State().Generation != 1 {
		t.Errorf("balance count: sampler %v, %d writes, generation %d", d.bal.sampler, w.writes()-n, d.State().Generation)
	}
}

// TestReloadHalfLifeRestartsLoads: averages made with the old half-life
// are dropped by a reload that changes it, and kept by one that does not.
func TestReloadHalfLifeRestartsLoads(t *testing.T) {
	tree := fixture(t)
	cfg := filepath.Join(t.TempDir(), "numairqd.yaml")
	writeFile(t, cfg, "balance: load\n")
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, cfg, nil)
	pl := &procLoad{tree: tree, counts: map[int][]uint64{}}
	pl.interval(t, nil, nil)
	d.loadTick(t, context.Background())
	if d.bal.sampler == nil || d.bal.loads == nil {
		t.Fatal("no sample after a load round")
	}
	writeFile(t, cfg, "balance: load\nmetrics_per_irq: true\n")
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	if d.bal.sampler == nil {
		t.Error("a reload that kept half_life dropped the sampler")
	}
	writeFile(t, cfg, "balance: load\nload_balance:\n  half_life: 2m\n")
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	if d.bal.sampler != nil || d.bal.loads != nil {
		t.Error("a reload that changed half_life kept the old averages")
	}
}

// TestConfirmedNeedsTheSameProposal: a proposal is taken after samples
// rounds of the same placement; a different one, or none, in between
// starts the count again.
func TestConfirmedNeedsTheSameProposal(t *testing.T) {
	a := &policy.Proposal{Held: policy.Held{25: {Name: "virtio0-input.0", CPU: 1}}}
	a2 := &policy.Proposal{Held: policy.Held{25: {Name: "virtio0-input.0", CPU: 1}}} // equal to a
	b := &policy.Proposal{Held: policy.Held{25: {Name: "virtio0-input.0", CPU: 2}}}
	var bal balancer
	for i, tc := range []struct {
		prop *policy.Proposal
		want bool
	}{
		{a, false}, {a2, false}, {a, true}, // three in a row
		{a, false}, {b, false}, {a, false}, {a, false}, // b breaks the run
		{nil, false}, {a, false}, {a, false}, {a, true}, // so does none
	} {
		if got := bal.confirmed(tc.prop, 3); got != tc.want {
			t.Fatalf("round %d: confirmed %v, want %v", i, got, tc.want)
		}
	}
}

// queueCounter is a load.QueueReader of eth0's counters: each read adds
// rate[k] packets to queue k, and fails with err when it is set.
type queueCounter struct {
	rate  []uint64
	sum   []uint64
	err   error
	reads int
}

func (q *queueCounter) ReadQueues() load.QueueCounts {
	q.reads++
	c := load.QueueCounts{Sources: map[string]string{"eth0": load.SourceQStats}, Err: q.err}
	for k, r := range q.rate {
		q.sum[k] += r
		c.Counts = append(c.Counts, load.QueueCount{Interface: "eth0", Queue: k, Packets: q.sum[k]})
	}
	return c
}

// TestLoadRoundQueueCounters: with per-queue counters the balanced
// device's queues are weighed by their packets, the plan says so, and a
// failing read is warned of once; queue_counters: off stops reading
// them and goes back to the interrupt estimate.
func TestLoadRoundQueueCounters(t *testing.T) {
	tree := fixture(t)
	w := &fileWriter{proc: tree.Proc()}
	cfg := filepath.Join(t.TempDir(), "numairqd.yaml")
	writeFile(t, cfg, "balance: load\n")
	qc := &queueCounter{rate: []uint64{9000, 1000, 1000, 1000, 1000, 1000}, sum: make([]uint64, 6),
		err: errors.New("ethtool eth1: operation not supported")}
	core, logs := observer.New(zap.InfoLevel)
	d := newDaemon(t, tree, w, cfg, func(o *Options) { o.Queues, o.Log = qc, zap.New(core) })
	ctx := context.Background()
	if _, err := d.Round(ctx, "startup", inventory.DepthAll, time.Time{}); err != nil {
		t.Fatal(err)
	}
	pl := &procLoad{tree: tree, counts: map[int][]uint64{}}
	// Every queue's input IRQ fires as often, on its own CPU, and each
	// CPU spends as much time: the estimate sees six equal queues.
	fired, soft := map[int][2]uint64{}, map[int]uint64{}
	for k, cpu := range []int{4, 5, 6, 7, 0, 1} {
		fired[25+2*k] = [2]uint64{uint64(cpu), 1000}
		soft[cpu] = 100
	}
	for range 3 {
		pl.interval(t, fired, soft)
		d.loadTick(t, ctx)
	}
	dev := planDevice(t, d.State().Plan, "0000:41:00.0")
	if dev.LoadSource != load.SourceQStats {
		t.Fatalf("load source %q, want %q", dev.LoadSource, load.SourceQStats)
	}
	l0, l1 := irqLoad(t, dev, 25), irqLoad(t, dev, 27)
	if l0 < 8*l1 || l0 > 10*l1 {
		t.Errorf("queue 0 load %v, queue 1 %v: want 9 to 1, their packets", l0, l1)
	}
	if n := logs.FilterMessageSnippet("queue counters could not be read").Len(); n != 1 {
		t.Errorf("%d warnings of the failing read over 3 samples, want 1", n)
	}

	writeFile(t, cfg, "balance: load\nload_balance:\n  queue_counters: off\n")
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	reads := qc.reads
	for range 3 {
		pl.interval(t, fired, soft)
		d.loadTick(t, ctx)
	}
	if qc.reads != reads {
		t.Errorf("queue_counters: off read the counters %d more times", qc.reads-reads)
	}
	dev = planDevice(t, d.State().Plan, "0000:41:00.0")
	if dev.LoadSource != load.SourceInterrupts {
		t.Errorf("queue_counters: off: load source %q, want %q", dev.LoadSource, load.SourceInterrupts)
	}
	if l0, l1 := irqLoad(t, dev, 25), irqLoad(t, dev, 27); math.Abs(l0-l1) > 1e-9 {
		t.Errorf("queue_counters: off: queue loads %v and %v, want the estimate's equal shares", l0, l1)
	}
}

func planDevice(t *testing.T, p *policy.Plan, pci string) policy.Device {
	t.Helper()
	for _, d := range p.Devices {
		if d.PCI == pci {
			return d
		}
	}
	t.Fatalf("no device %s in the plan", pci)
	return policy.Device{}
}

func irqLoad(t *testing.T, d policy.Device, irq int) float64 {
	t.Helper()
	for _, q := range d.IRQs {
		if q.Number == irq {
			return q.Load
		}
	}
	t.Fatalf("no IRQ %d on %s", irq, d.PCI)
	return 0
}
