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
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/napi"
	"github.com/numairqd/numairqd/pkg/policy"
)

// napiFixture is sixQueues' machine (virtio-net eth0, 6 pairs, config
// IRQ 24, input.k 25+2k, output.k 26+2k, on node 2) with threaded NAPI
// on: rx[k] and tx[k] are the pids of queue k's threads, all allowed
// on every CPU.
func napiFixture(t *testing.T, edit func(f *fixture)) (b balanced, rx, tx []int) {
	t.Helper()
	f := newFixture(t, fourNodes())
	f.virtio("0000:41:00.0", 0, 6, 24, 2)
	threads, rx, tx := fakesys.VirtioNAPIThreads("eth0", 6, 8193, 500, cpumask.New(0, 1, 2, 3, 4, 5, 6, 7))
	f.tree.AddNAPIThreads("eth0", threads...)
	if edit != nil {
		edit(f)
	}
	return readBack(t, f), rx, tx
}

func napiWrites(p *policy.Plan) []policy.Write {
	return slices.DeleteFunc(p.Writes(), func(w policy.Write) bool { return w.Kind != policy.WriteNAPIThread })
}

// TestNAPIThreadsFollowTheirIRQs: RX queue k's thread follows input.k,
// TX queue k's output.k, to the IRQ's planned CPUs; each is a write
// after the device's IRQ and XPS writes.
func TestNAPIThreadsFollowTheirIRQs(t *testing.T) {
	b, rx, tx := napiFixture(t, nil)
	p := b.Plan(nil, policy.Memory{}, policy.Balancing{})
	d := nicPlan(t, p, "0000:41:00.0")
	if d.NAPIMode != config.NAPIThreadsFollow || len(d.NAPIThreads) != 12 {
		t.Fatalf("NAPI mode %q, %d threads %+v; want follow and 12", d.NAPIMode, len(d.NAPIThreads), d.NAPIThreads)
	}
	irqs := map[int]policy.IRQ{}
	for _, q := range d.IRQs {
		irqs[q.Number] = q
	}
	for _, th := range d.NAPIThreads {
		wantIRQ, wantPID := 25+2*th.Queue, rx
		if th.Kind == napi.KindTX {
			wantIRQ, wantPID = 26+2*th.Queue, tx
		}
		q := irqs[wantIRQ]
		if th.IRQ != wantIRQ || th.PID != wantPID[th.Queue] || q.LeftAlone() || !th.Planned.Equal(q.Planned) ||
			!strings.Contains(th.Reason, fmt.Sprintf("follows IRQ %d (%s)", wantIRQ, q.Name)) {
			t.Errorf("thread %+v: want pid %d following IRQ %d on %s", th, wantPID[th.Queue], wantIRQ, q.Planned)
		}
	}
	ws := napiWrites(p)
	if len(ws) != 12 {
		t.Fatalf("%d NAPI writes, want 12:\n%s", len(ws), writeList(ws))
	}
	for i, w := range ws {
		th := d.NAPIThreads[i]
		if w.PID != th.PID || w.Name != th.Comm || w.IRQ != th.IRQ || w.Interface != "eth0" || w.Queue != th.Queue ||
			w.Device != "0000:41:00.0" || !w.After.Equal(th.Planned) || !w.Before.Equal(cpumask.New(0, 1, 2, 3, 4, 5, 6, 7)) {
			t.Errorf("write %d = %+v, want thread %+v", i, w, th)
		}
	}
	all := p.Writes()
	first := slices.IndexFunc(all, func(w policy.Write) bool { return w.Kind == policy.WriteNAPIThread })
	if slices.ContainsFunc(all[first:], func(w policy.Write) bool { return w.Kind != policy.WriteNAPIThread }) {
		t.Errorf("a non-NAPI write after the first NAPI write:\n%s", writeList(all))
	}
	var doc struct {
		Devices []struct {
			PCI         string              `json:"pci"`
			NAPIMode    string              `json:"napi_threads_mode"`
			NAPIThreads []policy.NAPIThread `json:"napi_threads"`
		} `json:"devices"`
	}
	raw, err := json.Marshal(p.Doc())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, dd := range doc.Devices {
		if dd.PCI != "0000:41:00.0" {
			continue
		}
		nd := dd.NAPIThreads[0]
		if dd.NAPIMode != "follow" || len(dd.NAPIThreads) != 12 || nd.Kind != "rx" || nd.Queue != 0 || nd.IRQ != 25 ||
			nd.PID != rx[0] || nd.NAPIID != 8193 || nd.Comm != "napi/eth0-8193" || nd.Current.String() != "0-7" || !nd.Planned.Equal(d.NAPIThreads[0].Planned) {
			t.Errorf("/plan device %s: mode %q, napi_threads[0] %+v", dd.PCI, dd.NAPIMode, nd)
		}
	}
}

// A thread already on its IRQ's CPUs is not written again; one whose
// IRQ is left alone follows the IRQ's current CPUs, online ones only.
func TestNAPIThreadsOnlyWhatDiffers(t *testing.T) {
	cfg := parseConfig(t, "devices:\n  - match: {driver: virtio-pci}\n    policy: ignore\n")
	b, rx, _ := napiFixture(t, func(f *fixture) {
		f.tree.WriteFile("proc/irq/25/smp_affinity_list", "3\n")
		f.tree.WriteFile("proc/irq/25/smp_affinity", "08\n")
		f.tree.WriteFile("proc/irq/27/smp_affinity_list", "5-6\n")
		f.tree.WriteFile("proc/irq/27/smp_affinity", "60\n")
	})
	p := b.Plan(cfg, policy.Memory{}, policy.Balancing{})
	d := nicPlan(t, p, "0000:41:00.0")
	byPID := map[int]policy.NAPIThread{}
	for _, th := range d.NAPIThreads {
		byPID[th.PID] = th
	}
	if th := byPID[rx[0]]; th.Planned.String() != "3" || !strings.Contains(th.Reason, "current (the IRQ is left alone)") {
		t.Errorf("RX 0 = %+v, want it on IRQ 25's current CPU 3", th)
	}
	if th := byPID[rx[1]]; th.Planned.String() != "5-6" {
		t.Errorf("RX 1 = %+v, want IRQ 27's current CPUs 5-6", th)
	}
	// The other IRQs are on 0-7 as the fixture wrote them: their
	// threads are there already.
	ws := napiWrites(p)
	if len(ws) != 2 || p.NAPIThreadDiffers(byPID[rx[2]]) {
		t.Errorf("%d NAPI writes, want RX 0 and 1 only:\n%s", len(ws), writeList(ws))
	}
}

func TestNAPIThreadsLeave(t *testing.T) {
	for _, yaml := range []string{"napi_threads: leave\n", "devices:\n  - name: nic\n    match: {driver: virtio-pci}\n    napi_threads: leave\n"} {
		b, _, _ := napiFixture(t, nil)
		p := b.Plan(parseConfig(t, yaml), policy.Memory{}, policy.Balancing{})
		d := nicPlan(t, p, "0000:41:00.0")
		if d.NAPIMode != config.NAPIThreadsLeave || len(d.NAPIThreads) != 12 || len(napiWrites(p)) != 0 {
			t.Fatalf("%q: mode %q, %d threads, %d writes; want leave, 12, 0", yaml, d.NAPIMode, len(d.NAPIThreads), len(napiWrites(p)))
		}
		for _, th := range d.NAPIThreads {
			if !th.LeftAlone() || th.IRQ < 0 || !strings.HasPrefix(th.Reason, "napi_threads leave: ") {
				t.Errorf("%q: thread %+v", yaml, th)
			}
		}
	}
}

// A thread whose queue no rule knows, or whose status is unreadable,
// is left alone and says why.
func TestNAPIThreadsLeftAloneWithAReason(t *testing.T) {
	b, rx, _ := napiFixture(t, func(f *fixture) {
		// A 13th thread breaks the TX rule's alternation: TX queues
		// become unknown, RX queues stay known.
		f.tree.WriteNAPIThread(fakesys.NAPIThread{PID: 900, Comm: "napi/eth0-0", Allowed: cpumask.New(0)})
	})
	ts := b.Inventory.Devices[slices.IndexFunc(b.Inventory.Devices, func(d inventory.Device) bool { return d.PCI == "0000:41:00.0" })].NAPI.Threads
	ts[slices.IndexFunc(ts, func(th inventory.NAPIThread) bool { return th.PID == rx[0] })].Err = fmt.Errorf("read proc/%d/status: boom", rx[0])
	p := b.Plan(nil, policy.Memory{}, policy.Balancing{})
	d := nicPlan(t, p, "0000:41:00.0")
	var unknown, rxFollow int
	for _, th := range d.NAPIThreads {
		switch {
		case th.Kind == "" && th.LeftAlone() && strings.Contains(th.Reason, "no driver rule knows its queue"):
			unknown++
		case th.PID == rx[0]:
			if !th.LeftAlone() || !strings.Contains(th.Reason, "boom") {
				t.Errorf("RX 0 with an unreadable status: %+v", th)
			}
		case th.Kind == napi.KindRX && !th.LeftAlone():
			rxFollow++
		default:
			t.Errorf("thread %+v", th)
		}
	}
	if unknown != 7 || rxFollow != 5 {
		t.Errorf("%d threads without a queue, %d RX threads following; want 7 and 5", unknown, rxFollow)
	}
}

// A thread whose cut name fits two interfaces is shown under the
// device's own, left alone.
func TestNAPIThreadUnresolvedLeftAlone(t *testing.T) {
	f := newFixture(t, fourNodes())
	f.tree.AddVirtioNet(fakesys.VirtioNet{BDF: "0000:41:00.0", Index: 0, Interface: "enp65s0f0np0", Pairs: 1, FirstIRQ: 24, NUMANode: 2})
	f.tree.AddVirtioNet(fakesys.VirtioNet{BDF: "0000:42:00.0", Index: 1, Interface: "enp65s0f0np1", Pairs: 1, FirstIRQ: 30, NUMANode: 2})
	f.tree.AddNAPIThreads("enp65s0f0np1", fakesys.NAPIThread{PID: 950, Comm: "napi/enp65s0f0n", Allowed: cpumask.New(0, 1)})
	p := readBack(t, f).Plan(nil, policy.Memory{}, policy.Balancing{})
	d := nicPlan(t, p, "0000:42:00.0")
	if len(d.NAPIThreads) != 1 {
		t.Fatalf("threads %+v, want the one unresolved", d.NAPIThreads)
	}
	th := d.NAPIThreads[0]
	if th.Interface != "enp65s0f0np1" || th.PID != 950 || !th.LeftAlone() || !strings.Contains(th.Reason, "fits interfaces") || len(napiWrites(p)) != 0 {
		t.Errorf("thread %+v, %d writes", th, len(napiWrites(p)))
	}
}
