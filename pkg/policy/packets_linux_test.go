package policy_test

import (
	"math"
	"testing"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/inventory"
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

// TestBalanceByPacketsNetlinkIDs: where netlink links an IRQ to several
// queue ids (with traffic classes, channel K's NAPI also completes tx
// queue K+8), the unit's packets are all of them; a rule's queue_regex
// keeps the names in charge, so the extra ids are not counted.
func TestBalanceByPacketsNetlinkIDs(t *testing.T) {
	f := newFixture(t, twoByTwo())
	f.virtio("0000:41:00.0", 0, 8, 24, 1)
	b := readBack(t, f)
	for i := range b.Inventory.Devices {
		if b.Inventory.Devices[i].PCI != "0000:41:00.0" {
			continue
		}
		net := map[int]inventory.NetQueue{}
		for k := range 8 {
			net[25+2*k] = inventory.NetQueue{Interface: "eth0", Queue: k, IDs: []int{k, k + 8}, RX: true, TX: true}
		}
		b.Inventory.Devices[i].NetQueues = net
	}
	rates := make([]float64, 16)
	for k := range 8 {
		rates[k] = 100
	}
	rates[8], rates[12] = 5000, 5000 // tc 1 of channels 0 and 4: both on CPU 0 by count
	l := b.loads(virtioLoads(24, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1), nil, nil)
	l.Queues = queueRates(load.SourceQStats, rates...)
	p := b.plan(parseConfig(t, loadCfg), policy.Balancing{Loads: l, MaxMoves: 100, MinGain: 0.1})
	d := device(t, p, "0000:41:00.0")
	if q := d.IRQs[1]; q.QueueSource != policy.QueueFromNetlink || len(q.QueueIDs) != 2 || math.Abs(q.Load-0.8*5100/10800) > 1e-9 {
		t.Errorf("IRQ %s: source %q ids %v load %v; want netlink, [0 8], %v", q.Name, q.QueueSource, q.QueueIDs, q.Load, 0.8*5100/10800)
	}
	if p.Balance.Proposal == nil {
		t.Errorf("no proposal to split channels 0 and 4; still %q", p.Balance.Still)
	}

	cfg := parseConfig(t, loadCfg+"devices:\n  - match: {driver: virtio-pci}\n    queue_regex: 'input\\.(?P<queue>\\d+)$'\n")
	p = b.plan(cfg, policy.Balancing{Loads: l, MaxMoves: 100, MinGain: 0.1})
	d = device(t, p, "0000:41:00.0")
	if q := d.IRQs[1]; q.QueueSource != policy.QueueFromName || q.QueueIDs != nil {
		t.Errorf("with queue_regex: IRQ %s source %q ids %v; want by name", q.Name, q.QueueSource, q.QueueIDs)
	}
}
