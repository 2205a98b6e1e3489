package policy_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
)

// nicPlan returns the plan's device at bdf.
func nicPlan(t *testing.T, p *policy.Plan, bdf string) policy.Device {
	t.Helper()
	for _, d := range p.Devices {
		if d.PCI == bdf {
			return d
		}
	}
	t.Fatalf("no device %s in the plan", bdf)
	return policy.Device{}
}

// xpsWrites returns p's XPS writes.
func xpsWrites(p *policy.Plan) []policy.Write {
	return slices.DeleteFunc(p.Writes(), func(w policy.Write) bool { return w.Kind != policy.WriteXPS })
}

// checkXPSCovers checks the invariants of a followed interface: every
// online CPU sends on some queue, each queue's map holds its completion
// IRQ's planned CPUs, and a CPU outside every IRQ's mask is on exactly
// one queue, one nearest it by NUMA distance.
func checkXPSCovers(t *testing.T, s *topology.Snapshot, d policy.Device) {
	t.Helper()
	irqs := map[int]policy.IRQ{}
	var own cpumask.Builder
	for _, q := range d.IRQs {
		irqs[q.Number] = q
	}
	var union cpumask.Builder
	for _, tq := range d.TxQueues {
		q, ok := irqs[tq.IRQ]
		if !ok {
			t.Fatalf("tx-%d: completion IRQ %d is not the device's", tq.Queue, tq.IRQ)
		}
		if !q.Planned.IsSubsetOf(tq.Planned) {
			t.Errorf("tx-%d: XPS %s lacks its completion IRQ %d's CPUs %s", tq.Queue, tq.Planned, q.Number, q.Planned)
		}
		union.Or(tq.Planned)
		own.Or(q.Planned)
	}
	if got := union.Mask(); !got.Equal(s.Online()) {
		t.Errorf("XPS maps cover CPUs %s, want every online CPU %s", got, s.Online())
	}
	dist := func(cpu int, m cpumask.Mask) int {
		best := 1 << 30
		for c := range m.All() {
			best = min(best, s.Distance(s.NodeOfCPU(cpu), s.NodeOfCPU(c)))
		}
		return best
	}
	for c := range s.Online().AndNot(own.Mask()).All() {
		var on []policy.TxQueue
		nearest := 1 << 30
		for _, tq := range d.TxQueues {
			nearest = min(nearest, dist(c, irqs[tq.IRQ].Planned))
			if tq.Planned.Contains(c) {
				on = append(on, tq)
			}
		}
		if len(on) != 1 {
			t.Errorf("CPU %d without a queue is on %d queues, want 1", c, len(on))
			continue
		}
		if got := dist(c, irqs[on[0].IRQ].Planned); got != nearest {
			t.Errorf("CPU %d sends on tx-%d at distance %d, want the nearest, %d", c, on[0].Queue, got, nearest)
		}
	}
}

func xpsList(d policy.Device) []string {
	var out []string
	for _, tq := range d.TxQueues {
		out = append(out, tq.Planned.String())
	}
	return out
}

// TestXPSLabGuest: the 4-node lab (node 2's spread 4 5 | 6 7 | 0 1 |
// 2 3), virtio-net with 6 pairs on node 2: tx-k follows output.k, and
// node 1's CPUs 2 and 3, which hold no queue, go to the queues on node
// 0 (distance 12), one each.
func TestXPSLabGuest(t *testing.T) {
	b := sixQueues(t, false, nil)
	p := b.Plan(nil, policy.Memory{}, policy.Balancing{})
	d := nicPlan(t, p, "0000:41:00.0")
	if d.XPS != config.XPSFollow {
		t.Errorf("XPS %q, want follow by default", d.XPS)
	}
	if got, want := xpsList(d), []string{"4", "5", "6", "7", "0,2", "1,3"}; !slices.Equal(got, want) {
		t.Errorf("planned XPS %q, want %q", got, want)
	}
	for k, tq := range d.TxQueues {
		if tq.Interface != "eth0" || tq.Queue != k || tq.IRQ != 26+2*k {
			t.Errorf("tx queue %d = %+v, want eth0 tx-%d on IRQ %d (output.%d)", k, tq, k, 26+2*k, k)
		}
	}
	if !strings.Contains(d.TxQueues[4].Reason, "CPU 2") || !strings.Contains(d.TxQueues[4].Reason, "nearest") {
		t.Errorf("tx-4 reason %q does not name CPU 2 as a nearest CPU", d.TxQueues[4].Reason)
	}
	checkXPSCovers(t, b.Snapshot, d)
	// The driver's map (0-1, 2-3, 4, 5, 6, 7) differs on every queue.
	ws := xpsWrites(p)
	if len(ws) != 6 || unchangedXPS(p) != 0 {
		t.Fatalf("%d XPS writes, %d unchanged, want 6 and 0:\n%s", len(ws), unchangedXPS(p), writeList(ws))
	}
	for k, w := range ws {
		if w.Interface != "eth0" || w.Queue != k || w.Name != fmt.Sprintf("eth0 tx-%d", k) || w.Device != "0000:41:00.0" ||
			!w.Before.Equal(d.TxQueues[k].Current) || !w.After.Equal(d.TxQueues[k].Planned) {
			t.Errorf("write %d = %+v", k, w)
		}
	}
	// XPS writes come after the device's IRQ writes.
	all := p.Writes()
	if i := slices.IndexFunc(all, func(w policy.Write) bool { return w.Kind == policy.WriteXPS }); i < 0 ||
		slices.ContainsFunc(all[i:], func(w policy.Write) bool { return w.Kind != policy.WriteXPS }) {
		t.Errorf("writes not IRQs first, then XPS:\n%s", writeList(all))
	}
	if s := policy.WriteXPS.String(); s != "xps" {
		t.Errorf("WriteXPS is %q", s)
	}
}

// TestXPSOnlyDiffering: queues whose map already is the plan's, on the
// online CPUs, are not written.
func TestXPSOnlyDiffering(t *testing.T) {
	f := &fixture{t: t, tree: fakesys.NewQEMUGuestNIC(t, false), m: fourNodes()} // CPUs 6-7 offline
	f.tree.WriteFile("sys/class/net/eth0/queues/tx-0/xps_cpus", "d0\n")          // 4,6,7: 4 on line
	f.tree.WriteFile("sys/class/net/eth0/queues/tx-3/xps_cpus", "0a\n")          // 1,3
	b := readBack(t, f)
	p := b.Plan(nil, policy.Memory{}, policy.Balancing{})
	d := nicPlan(t, p, "0000:41:00.0")
	if got, want := xpsList(d), []string{"4", "5", "0,2", "1,3"}; !slices.Equal(got, want) {
		t.Errorf("planned XPS %q, want %q", got, want)
	}
	checkXPSCovers(t, b.Snapshot, d)
	ws := xpsWrites(p)
	var qs []int
	for _, w := range ws {
		qs = append(qs, w.Queue)
	}
	if !slices.Equal(qs, []int{1, 2}) || unchangedXPS(p) != 2 {
		t.Errorf("XPS writes of queues %v, %d unchanged, want 1 and 2 written, 2 unchanged", qs, unchangedXPS(p))
	}
}

// TestXPSMoreQueuesThanCPUs: 8 queues on 4 vCPUs, placed linear: each
// CPU sends on every queue whose IRQ is on it, and on no other.
func TestXPSMoreQueuesThanCPUs(t *testing.T) {
	m := fakesys.Machine{Online: "0-3", Nodes: []fakesys.Node{{ID: 0, CPUs: "0-3", Distance: []int{10}}}}
	f := newFixture(t, m)
	f.virtio("0000:41:00.0", 0, 8, 24, 0)
	b := readBack(t, f)
	d := nicPlan(t, b.Plan(nil, policy.Memory{}, policy.Balancing{}), "0000:41:00.0")
	if d.Policy != config.PolicyLinear || len(d.TxQueues) != 8 {
		t.Fatalf("policy %s, %d tx queues; want linear and 8", d.Policy, len(d.TxQueues))
	}
	for c := range 4 {
		var on []int
		for _, tq := range d.TxQueues {
			if tq.Planned.Contains(c) {
				on = append(on, tq.Queue)
			}
		}
		if want := []int{c, c + 4}; !slices.Equal(on, want) {
			t.Errorf("CPU %d sends on queues %v, want %v", c, on, want)
		}
	}
	checkXPSCovers(t, b.Snapshot, d)
}

// TestXPSBannedCPUsStillSend: banned CPUs take no IRQ, but their
// applications send, so they are on the nearest queue.
func TestXPSBannedCPUsStillSend(t *testing.T) {
	b := sixQueues(t, false, nil)
	d := nicPlan(t, b.Plan(parseConfig(t, "banned_cpus: 2-3"), policy.Memory{}, policy.Balancing{}), "0000:41:00.0")
	checkXPSCovers(t, b.Snapshot, d)
	for _, c := range []int{2, 3} {
		if !slices.ContainsFunc(d.TxQueues, func(tq policy.TxQueue) bool { return tq.Planned.Contains(c) }) {
			t.Errorf("banned CPU %d sends on no queue: %q", c, xpsList(d))
		}
	}
}

// TestXPSLeftAlone: leave mode, an ignored device, a queue with no
// completion IRQ and an unreadable map are not written, and say why.
func TestXPSLeftAlone(t *testing.T) {
	t.Run("leave", func(t *testing.T) {
		for _, yaml := range []string{"xps: leave", "devices:\n  - match: {driver: virtio-pci}\n    xps: leave"} {
			p := sixQueues(t, false, nil).Plan(parseConfig(t, yaml), policy.Memory{}, policy.Balancing{})
			d := nicPlan(t, p, "0000:41:00.0")
			if ws := xpsWrites(p); len(ws) != 0 {
				t.Errorf("%q: XPS writes\n%s", yaml, writeList(ws))
			}
			if len(d.TxQueues) != 6 || d.XPS != config.XPSLeave {
				t.Fatalf("%q: XPS %q, tx queues %+v", yaml, d.XPS, d.TxQueues)
			}
			for _, tq := range d.TxQueues {
				if !tq.LeftAlone() || !strings.HasPrefix(tq.Reason, "xps leave") || tq.Current.IsEmpty() {
					t.Errorf("%q: tx-%d = %+v, want left alone by xps leave, its map shown", yaml, tq.Queue, tq)
				}
			}
			if len(p.Writes()) == 0 {
				t.Errorf("%q: leave stopped the IRQ writes too", yaml)
			}
		}
	})
	t.Run("ignored device", func(t *testing.T) {
		p := sixQueues(t, false, nil).Plan(parseConfig(t, "devices:\n  - match: {driver: virtio-pci}\n    policy: ignore"),
			policy.Memory{}, policy.Balancing{})
		for _, tq := range nicPlan(t, p, "0000:41:00.0").TxQueues {
			if !tq.LeftAlone() || !strings.Contains(tq.Reason, "is left alone") {
				t.Errorf("tx-%d = %+v, want left alone with its IRQ", tq.Queue, tq)
			}
		}
		if ws := p.Writes(); len(ws) != 0 {
			t.Errorf("writes for an ignored device:\n%s", writeList(ws))
		}
	})
	t.Run("no IRQ, unreadable", func(t *testing.T) {
		f := newFixture(t, fourNodes())
		f.virtio("0000:41:00.0", 0, 6, 24, 2)
		f.tree.WriteFile("sys/class/net/eth0/queues/tx-6/xps_cpus", "00\n")
		f.tree.WriteFile("sys/class/net/eth0/queues/tx-5/xps_cpus", "zz\n")
		b := readBack(t, f)
		p := b.Plan(nil, policy.Memory{}, policy.Balancing{})
		d := nicPlan(t, p, "0000:41:00.0")
		if len(d.TxQueues) != 7 {
			t.Fatalf("tx queues %+v, want 7", d.TxQueues)
		}
		if tq := d.TxQueues[6]; !tq.LeftAlone() || tq.IRQ != -1 || !strings.Contains(tq.Reason, "no completion IRQ") {
			t.Errorf("tx-6 = %+v, want left alone for want of an IRQ", tq)
		}
		if tq := d.TxQueues[5]; !tq.LeftAlone() || !strings.Contains(tq.Reason, "unreadable") {
			t.Errorf("tx-5 = %+v, want left alone, unreadable", tq)
		}
		for _, w := range xpsWrites(p) {
			if w.Queue >= 5 {
				t.Errorf("write of a queue left alone: %+v", w)
			}
		}
		// CPU 1, whose queue 5 is left alone, sends on queue 4, whose
		// IRQ is on CPU 0 of the same node.
		if tq := d.TxQueues[4]; !tq.Planned.Equal(cpumask.New(0, 1, 2, 3)) {
			t.Errorf("tx-4 XPS %s, want 0-3 (its CPU 0, CPU 1 of its node, node 1's 2-3)", tq.Planned)
		}
		var union cpumask.Builder
		for _, tq := range d.TxQueues[:5] {
			union.Or(tq.Planned)
		}
		if got := union.Mask(); !got.Equal(b.Snapshot.Online()) {
			t.Errorf("the followed queues cover %s, want %s", got, b.Snapshot.Online())
		}
	})
}

// TestXPSDoc: /plan shows each tx queue's XPS CPUs before and after
// under the keys scripts read.
func TestXPSDoc(t *testing.T) {
	p := sixQueues(t, false, nil).Plan(nil, policy.Memory{}, policy.Balancing{})
	data, err := json.Marshal(p.Doc())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Devices []struct {
			PCI      string
			XPS      string `json:"xps"`
			TxQueues []struct {
				Interface string `json:"interface"`
				Queue     int    `json:"queue"`
				IRQ       *int   `json:"irq"`
				Current   string `json:"current"`
				Planned   string `json:"planned"`
				Reason    string `json:"reason"`
			} `json:"tx_queues"`
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, d := range doc.Devices {
		if d.PCI != "0000:41:00.0" {
			if len(d.TxQueues) != 0 {
				t.Errorf("%s has tx queues %+v", d.PCI, d.TxQueues)
			}
			continue
		}
		if d.XPS != "follow" || len(d.TxQueues) != 6 {
			t.Fatalf("device doc xps %q, tx queues %+v", d.XPS, d.TxQueues)
		}
		q := d.TxQueues[4]
		if q.Interface != "eth0" || q.Queue != 4 || q.IRQ == nil || *q.IRQ != 34 || q.Current != "6" || q.Planned != "0,2" || q.Reason == "" {
			t.Errorf("tx-4 doc = %+v, want eth0 queue 4 irq 34, 6 -> 0,2", q)
		}
	}
}

// unchangedXPS counts the tx queues whose XPS map p sets that are
// already so.
func unchangedXPS(p *policy.Plan) int {
	n := 0
	for _, d := range p.Devices {
		for _, t := range d.TxQueues {
			if !t.LeftAlone() && !p.XPSDiffers(t) {
				n++
			}
		}
	}
	return n
}
