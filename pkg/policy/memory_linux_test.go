package policy_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
)

// sixQueues is the 4-node guest (node 2's spread order 4 5 6 7 0 1 2 3)
// with a 6-queue virtio-net on node 2: config IRQ 24, queue k on IRQs
// 25+2k and 26+2k, every IRQ on CPUs 0-7 but those on gives. core makes
// each node's two CPUs one core.
func sixQueues(t *testing.T, core bool, on map[int]string) balanced {
	t.Helper()
	m := fourNodes()
	if core {
		m.Siblings = func(c int) string { return fmt.Sprintf("%d-%d", c&^1, c|1) }
	}
	f := newFixture(t, m)
	f.virtio("0000:41:00.0", 0, 6, 24, 2)
	for irq, list := range on {
		mask, err := cpumask.ParseList(list)
		if err != nil {
			t.Fatal(err)
		}
		f.tree.WriteFile(fmt.Sprintf("proc/irq/%d/smp_affinity_list", irq), mask.String()+"\n")
		f.tree.WriteFile(fmt.Sprintf("proc/irq/%d/smp_affinity", irq), mask.Hex(8)+"\n")
	}
	return readBack(t, f)
}

// TestFull: the planner moves no IRQ onto a CPU with no free vector
// that is not there already, by the rule the writer used on ENOSPC.
func TestFull(t *testing.T) {
	const q1 = "numa-hop: queue 1 -> CPU "
	tests := []struct {
		name    string
		cfg     string
		core    bool
		on      map[int]string // current affinity by IRQ; others 0-7
		full    string
		queues  []string // planned mask by queue
		control string   // planned mask of config IRQ 24
		irq27   string   // the reason of IRQ 27 (queue 1, input)
		noCPU   bool
	}{
		{name: "nothing full", queues: []string{"4", "5", "6", "7", "0", "1"}, control: "4-5",
			irq27: q1 + "5, hop 0, distance 10 from node 2"},
		{name: "queue 1 takes the next CPU of the order", full: "5,12",
			queues: []string{"4", "6", "6", "7", "0", "1"}, control: "4",
			irq27: q1 + "6, hop 1, distance 12 from node 2; CPU 5 has no free vector, next CPU of the order"},
		{name: "a queue already on the full CPU stays", full: "5", on: map[int]string{27: "5", 28: "5"},
			queues: []string{"4", "5", "6", "7", "0", "1"}, control: "4",
			irq27: q1 + "5, hop 0, distance 10 from node 2"},
		{name: "the walk wraps", full: "4-7", queues: []string{"0", "0", "0", "0", "0", "1"}, control: "0",
			irq27: q1 + "0, hop 2, distance 20 from node 2; CPU 5 has no free vector, next CPU of the order"},
		{name: "every allowed CPU full", cfg: "banned_cpus: 0-3\n", full: "4-7", queues: []string{"", "", "", "", "", ""},
			irq27: "no allowed CPU has a free vector (full: 4-7)", noCPU: true},
		{name: "pinned mask loses the full CPU", cfg: "devices:\n  - match: {driver: virtio_net}\n    policy: pinned\n    cpus: 4-5\n",
			full: "5", queues: []string{"4", "4", "4", "4", "4", "4"}, control: "4",
			irq27: "pinned to 4 by rule at line 2; CPU 5 has no free vector, left out"},
		{name: "pinned to full CPUs only", cfg: "devices:\n  - match: {driver: virtio_net}\n    policy: pinned\n    cpus: 4-5\n",
			full: "4-5", queues: []string{"", "", "", "", "", ""},
			irq27: "no allowed CPU has a free vector (full: 4-5)", noCPU: true},
		{name: "core mask loses the full CPU", cfg: "devices:\n  - match: {driver: virtio_net}\n    mask: core\n", core: true,
			full: "5", queues: []string{"4", "4", "6-7", "6-7", "0-1", "0-1"}, control: "4",
			irq27: "numa-hop: queue 1 -> core 4, hop 0, distance 10 from node 2; CPU 5 has no free vector, left out"},
		{name: "a wholly full core walks on", cfg: "devices:\n  - match: {driver: virtio_net}\n    mask: core\n", core: true,
			full: "4-5", queues: []string{"6", "6", "6-7", "6-7", "0-1", "0-1"}, control: "6",
			irq27: "numa-hop: queue 1 -> core 6, hop 1, distance 12 from node 2; CPUs 4-5 have no free vector, next CPU of the order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			full := fakesys.MustMask(t, tt.full)
			p := sixQueues(t, tt.core, tt.on).Plan(parseConfig(t, tt.cfg), policy.Memory{Full: full}, policy.Balancing{})
			if want := full.And(fakesys.MustMask(t, "0-7")); !p.Full.Equal(want) || !p.Doc().Full.Equal(want) {
				t.Errorf("Plan.Full %s, doc %q; want %s", p.Full, p.Doc().Full, want)
			}
			d := device(t, p, "0000:41:00.0")
			wantQueues(t, d, tt.queues...)
			if got := d.IRQs[0].Planned.String(); got != tt.control {
				t.Errorf("config IRQ planned %q, want %q", got, tt.control)
			}
			q := d.IRQs[3]
			if q.Number != 27 || q.Reason != tt.irq27 || q.NoCPU != tt.noCPU {
				t.Errorf("IRQ %d: reason %q, no_cpu %v; want %q, %v", q.Number, q.Reason, q.NoCPU, tt.irq27, tt.noCPU)
			}
			if got := len(p.Unplaced()); tt.noCPU != (got == len(d.IRQs)) {
				t.Errorf("%d IRQs unplaced", got)
			}
			for _, q := range d.IRQs {
				if q.Planned.Intersects(full) && !q.Planned.Equal(q.Current) {
					t.Errorf("IRQ %d moved onto %s, full %s", q.Number, q.Planned, full)
				}
			}
		})
	}
}

// TestFullKeepsHeld: a balanced queue moved off a full CPU keeps load
// balancing's choice as its held CPU, so the next plan holds it too.
func TestFullKeepsHeld(t *testing.T) {
	b := sixQueues(t, false, nil)
	cfg := parseConfig(t, loadCfg)
	p := b.Plan(cfg, policy.Memory{Full: cpumask.New(5)}, policy.Balancing{})
	q := device(t, p, "0000:41:00.0").IRQs[3]
	if q.CPU != 6 || q.Reason != "numa-hop, balance load: queue 1 -> CPU 6, hop 1, distance 12 from node 2; CPU 5 has no free vector, next CPU of the order" {
		t.Errorf("IRQ 27 on CPU %d: %q", q.CPU, q.Reason)
	}
	if h := p.Held()[27]; h.CPU != 5 {
		t.Errorf("held %+v, want CPU 5", h)
	}
	again := b.Plan(cfg, policy.Memory{Full: cpumask.New(5), Held: p.Held()}, policy.Balancing{})
	if again.Balance.Reset != 0 || !slices.Equal(queueCPU(t, again, "0000:41:00.0"), queueCPU(t, p, "0000:41:00.0")) {
		t.Errorf("holding the plan's placement: reset %d, queues %v; want 0, %v", again.Balance.Reset,
			queueCPU(t, again, "0000:41:00.0"), queueCPU(t, p, "0000:41:00.0"))
	}
}

func TestRefused(t *testing.T) {
	b := sixQueues(t, false, nil)
	for _, tt := range []struct {
		name    string
		refused policy.Refusals
		managed bool
	}{
		{"same name", policy.Refusals{27: {Name: "virtio0-input.1", Errno: "EIO"}}, true},
		{"number reused under another name", policy.Refusals{27: {Name: "nvme0q1", Errno: "EIO"}}, false},
	} {
		q := device(t, b.Plan(nil, policy.Memory{Refused: tt.refused}, policy.Balancing{}), "0000:41:00.0").IRQs[3]
		if q.Managed != tt.managed || q.LeftAlone() != tt.managed ||
			tt.managed && q.Reason != "managed by the kernel: write failed with EIO" {
			t.Errorf("%s: IRQ %d managed %v, planned %s, reason %q", tt.name, q.Number, q.Managed, q.Planned, q.Reason)
		}
	}
}

// TestMemoryLearned: only a new refusal or a new full CPU is learned;
// forgetting, or a changed held placement, is not.
func TestMemoryLearned(t *testing.T) {
	refused := policy.Refusals{27: {Name: "virtio0-input.1", Errno: "EIO"}}
	held := policy.Held{25: {Name: "virtio0-input.0", CPU: 4}}
	m := policy.Memory{Refused: refused, Full: cpumask.New(5), Held: held}
	tests := []struct {
		name          string
		before, after policy.Memory
		want          bool
	}{
		{"zero", policy.Memory{}, policy.Memory{}, false},
		{"same contents, other maps", m, policy.Memory{Refused: policy.Refusals{27: refused[27]}, Full: cpumask.New(5), Held: held}, false},
		{"refusal forgotten, full CPU gone offline", m, policy.Memory{Held: held}, false},
		{"held CPU", m, policy.Memory{Refused: refused, Full: m.Full, Held: policy.Held{25: {Name: "virtio0-input.0", CPU: 5}}}, false},
		{"refusal's errno", m, policy.Memory{Refused: policy.Refusals{27: {Name: "virtio0-input.1", Errno: "EPERM"}}, Full: m.Full}, true},
		{"one more refusal", m, policy.Memory{Refused: policy.Refusals{27: refused[27], 28: refused[27]}, Full: m.Full}, true},
		{"one more full CPU", m, policy.Memory{Refused: refused, Full: cpumask.New(5, 6)}, true},
	}
	for _, tt := range tests {
		if got := tt.after.Learned(tt.before); got != tt.want {
			t.Errorf("%s: Learned = %v, want %v", tt.name, got, tt.want)
		}
	}
}
