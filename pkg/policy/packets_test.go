package policy_test

import (
	"math"
	"testing"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/policy"
)

// queueRates gives eth0's queue k the rate per[k] from src.
func queueRates(src string, per ...float64) []load.QueueLoad {
	out := make([]load.QueueLoad, len(per))
	for k, r := range per {
		out[k] = load.QueueLoad{Interface: "eth0", Queue: k, Source: src, Rate: r, Ready: true}
	}
	return out
}

// TestBalanceByPackets: the interrupt estimate sees 8 even queues (NAPI
// queues under load take fewer interrupts per packet, so the busy ones
// look like the rest). The per-queue counters say queues 0 and 4, both
// on CPU 0 by count, carry most packets: the device's measured time is
// shared by packets, the plan says where its loads came from, and the
// proposal splits the two. Without counters, or with one queue not
// counted, the estimate stands and nothing moves.
func TestBalanceByPackets(t *testing.T) {
	f := newFixture(t, twoByTwo())
	f.virtio("0000:41:00.0", 0, 8, 24, 1)
	b := readBack(t, f)
	cfg := parseConfig(t, loadCfg)
	even := virtioLoads(24, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1)
	rates := []float64{4000, 200, 200, 200, 4000, 200, 200, 200}

	l := b.loads(even, nil, nil)
	p := b.plan(cfg, policy.Balancing{Loads: l, MaxMoves: 100, MinGain: 0.1})
	if d := device(t, p, "0000:41:00.0"); d.LoadSource != load.SourceInterrupts || p.Balance.Proposal != nil {
		t.Fatalf("no counters: load source %q, proposal %+v; want interrupts and none", d.LoadSource, p.Balance.Proposal)
	}

	l.Queues = queueRates(load.SourceQStats, rates[:7]...) // queue 7 not counted
	p = b.plan(cfg, policy.Balancing{Loads: l, MaxMoves: 100, MinGain: 0.1})
	if d := device(t, p, "0000:41:00.0"); d.LoadSource != load.SourceInterrupts || p.Balance.Proposal != nil {
		t.Fatalf("one queue not counted: load source %q, proposal %+v; want interrupts and none", d.LoadSource, p.Balance.Proposal)
	}

	l.Queues = queueRates(load.SourceQStats, rates...)
	p = b.plan(cfg, policy.Balancing{Loads: l, MaxMoves: 100, MinGain: 0.1})
	d := device(t, p, "0000:41:00.0")
	if d.LoadSource != load.SourceQStats {
		t.Errorf("load source %q, want %q", d.LoadSource, load.SourceQStats)
	}
	var sum float64
	for _, q := range d.IRQs {
		sum += q.Load
	}
	if math.Abs(sum-0.8) > 1e-9 {
		t.Errorf("device load %v after sharing by packets, want the estimate's 0.8", sum)
	}
	if q := d.IRQs[1]; q.Name != "virtio0-input.0" || math.Abs(q.Load-0.8*4000/9200) > 1e-9 {
		t.Errorf("IRQ %s load %v, want %v", q.Name, q.Load, 0.8*4000/9200)
	}
	if math.Abs(p.Balance.Peak-2*0.8*4000/9200) > 1e-9 {
		t.Errorf("peak %v, want queues 0 and 4 together on CPU 0: %v", p.Balance.Peak, 2*0.8*4000/9200)
	}
	pr := p.Balance.Proposal
	if pr == nil {
		t.Fatalf("no proposal; still %q", p.Balance.Still)
	}
	moved := map[int]int{}
	for _, m := range pr.Moves {
		moved[m.Queue] = m.To
	}
	cpu := func(q int) int {
		if to, ok := moved[q]; ok {
			return to
		}
		return queueCPU(t, p, "0000:41:00.0")[q]
	}
	if cpu(0) == cpu(4) {
		t.Errorf("proposal %+v leaves queues 0 and 4 together on CPU %d", pr.Moves, cpu(0))
	}
	if doc := p.Doc(); doc.Devices[0].LoadSource != load.SourceQStats {
		t.Errorf("/plan load_source %q, want %q", doc.Devices[0].LoadSource, load.SourceQStats)
	}

	// A device not balanced by load has no load source.
	p = b.plan(config.Default(), policy.Balancing{Loads: l})
	if d := device(t, p, "0000:41:00.0"); d.LoadSource != "" {
		t.Errorf("balance count: load source %q, want none", d.LoadSource)
	}
}
