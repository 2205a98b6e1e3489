package metrics

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/bans"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
	"github.com/numairqd/numairqd/pkg/topology"
)

var (
	roundAt = time.Unix(1700000000, 0)
	all16   = cpumask.New(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
)

// queue is a planned queue IRQ on cpu at the given node distance.
func queue(n, qi, cpu, dist int) policy.IRQ {
	return policy.IRQ{Number: n, Name: fmt.Sprintf("mlx5_comp%d", qi), Role: policy.RoleQueue, Queue: qi,
		Current: all16, Planned: cpumask.New(cpu), CPU: cpu, Hop: 0, Distance: dist}
}

// testPlan has a NIC with placed, failed, managed and control IRQs, an
// ignored NVMe device, and two non-PCI IRQs that both count as
// device="none".
func testPlan() *policy.Plan {
	unplanned := func(n, qi int) policy.IRQ {
		return policy.IRQ{Number: n, Name: fmt.Sprintf("nvme0q%d", qi), Role: policy.RoleQueue, Queue: qi,
			Current: all16, CPU: -1, Hop: -1, Distance: -1}
	}
	pinned := func(n int, name string) policy.Device {
		return policy.Device{Node: -1, SpreadNode: -1, Policy: config.PolicyPinned, Mask: config.MaskCPU,
			IRQs: []policy.IRQ{{Number: n, Name: name, Role: policy.RoleControl, Queue: -1,
				Current: all16, Planned: cpumask.New(0), CPU: -1, Hop: -1, Distance: -1}}}
	}
	return &policy.Plan{
		Allowed: all16,
		Devices: []policy.Device{
			{PCI: "0000:41:00.0", Driver: "mlx5_core", Interfaces: []string{"eth0"}, Node: 1, SpreadNode: 1,
				Policy: config.PolicyNUMAHop, Mask: config.MaskCPU,
				IRQs: []policy.IRQ{
					{Number: 100, Name: "mlx5_async0", Role: policy.RoleControl, Queue: -1,
						Current: all16, Planned: cpumask.New(8, 9, 10, 11), CPU: -1, Hop: -1, Distance: -1},
					queue(101, 0, 8, 10),
					queue(102, 1, 9, 10),
					queue(103, 2, 0, 20),
					queue(104, 3, 1, 20),
					queue(105, 4, 2, 20), // failed below
					{Number: 106, Name: "mlx5_comp5", Role: policy.RoleQueue, Queue: 5, Managed: true,
						Current: cpumask.New(12), CPU: -1, Hop: -1, Distance: -1},
				}},
			{PCI: "0000:c1:00.0", Driver: "nvme", Node: 1, SpreadNode: 1, Policy: config.PolicyIgnore, Mask: config.MaskCPU,
				IRQs: []policy.IRQ{unplanned(200, 0), unplanned(201, 1)}},
			pinned(1, "i8042"),
			pinned(9, "acpi"),
		},
	}
}

// published returns a store holding one published State with plan p
// and the failures given.
func published(p *policy.Plan, failed map[int]apply.Kind) *state.Store {
	var store state.Store
	publish(&store, p, failed)
	return &store
}

func publish(store *state.Store, p *policy.Plan, failed map[int]apply.Kind) {
	store.Publish(&state.State{
		Machine: machine.Machine{Snapshot: &topology.Snapshot{}, Inventory: &inventory.Inventory{}}, Plan: p,
		Apply: apply.Result{Failed: failed}, Finished: roundAt,
	})
}

// testStore holds testPlan with IRQ 105 failed for lack of vectors.
func testStore() *state.Store {
	return published(testPlan(), map[int]apply.Kind{105: apply.KindNoSpace})
}

const stateHeader = `# HELP numairqd_allowed_cpus CPUs IRQs may be placed on: online minus banned, isolated and nohz_full as configured.
# TYPE numairqd_allowed_cpus gauge
numairqd_allowed_cpus 16
# HELP numairqd_device_mean_numa_distance Mean NUMA node distance from a device's node to the CPUs of its placed queue IRQs (10 = local).
# TYPE numairqd_device_mean_numa_distance gauge
numairqd_device_mean_numa_distance{device="0000:41:00.0"} 15
# HELP numairqd_device_queue_irqs Queue IRQs of a device in the current plan.
# TYPE numairqd_device_queue_irqs gauge
numairqd_device_queue_irqs{device="0000:41:00.0",policy="numa-hop"} 6
numairqd_device_queue_irqs{device="0000:c1:00.0",policy="ignore"} 2
numairqd_device_queue_irqs{device="none",policy="pinned"} 0
# HELP numairqd_irqs IRQs in the current plan, by device, policy and state (placed, managed, ignored, failed, effective_mismatch).
# TYPE numairqd_irqs gauge
numairqd_irqs{device="0000:41:00.0",policy="numa-hop",state="effective_mismatch"} 0
numairqd_irqs{device="0000:41:00.0",policy="numa-hop",state="failed"} 1
numairqd_irqs{device="0000:41:00.0",policy="numa-hop",state="ignored"} 0
numairqd_irqs{device="0000:41:00.0",policy="numa-hop",state="managed"} 1
numairqd_irqs{device="0000:41:00.0",policy="numa-hop",state="placed"} 5
numairqd_irqs{device="0000:c1:00.0",policy="ignore",state="effective_mismatch"} 0
numairqd_irqs{device="0000:c1:00.0",policy="ignore",state="failed"} 0
numairqd_irqs{device="0000:c1:00.0",policy="ignore",state="ignored"} 2
numairqd_irqs{device="0000:c1:00.0",policy="ignore",state="managed"} 0
numairqd_irqs{device="0000:c1:00.0",policy="ignore",state="placed"} 0
numairqd_irqs{device="none",policy="pinned",state="effective_mismatch"} 0
numairqd_irqs{device="none",policy="pinned",state="failed"} 0
numairqd_irqs{device="none",policy="pinned",state="ignored"} 0
numairqd_irqs{device="none",policy="pinned",state="managed"} 0
numairqd_irqs{device="none",policy="pinned",state="placed"} 2
# HELP numairqd_last_round_timestamp_seconds When the last reconcile round finished.
# TYPE numairqd_last_round_timestamp_seconds gauge
numairqd_last_round_timestamp_seconds 1.7e+09
# HELP numairqd_state_generation Generation of the published state: 1 after the first round, +1 every round.
# TYPE numairqd_state_generation gauge
numairqd_state_generation 1
`

const perIRQ = `# HELP numairqd_irq_planned_cpu CPU a queue IRQ is planned on (only with metrics_per_irq).
# TYPE numairqd_irq_planned_cpu gauge
numairqd_irq_planned_cpu{device="0000:41:00.0",irq="101",name="mlx5_comp0"} 8
numairqd_irq_planned_cpu{device="0000:41:00.0",irq="102",name="mlx5_comp1"} 9
numairqd_irq_planned_cpu{device="0000:41:00.0",irq="103",name="mlx5_comp2"} 0
numairqd_irq_planned_cpu{device="0000:41:00.0",irq="104",name="mlx5_comp3"} 1
numairqd_irq_planned_cpu{device="0000:41:00.0",irq="105",name="mlx5_comp4"} 2
`

var stateNames = []string{"numairqd_allowed_cpus", "numairqd_device_mean_numa_distance", "numairqd_device_queue_irqs",
	"numairqd_irqs", "numairqd_last_round_timestamp_seconds", "numairqd_state_generation", "numairqd_irq_planned_cpu"}

func TestStateCollector(t *testing.T) {
	for _, tc := range []struct {
		name   string
		store  *state.Store
		perIRQ bool
		want   string
	}{
		{name: "before first round", store: &state.Store{}, want: ""},
		{name: "plan", store: testStore(), want: stateHeader},
		{name: "plan per IRQ", store: testStore(), perIRQ: true, want: stateHeader + perIRQ},
		{name: "empty plan", store: published(&policy.Plan{}, nil), want: `# HELP numairqd_allowed_cpus CPUs IRQs may be placed on: online minus banned, isolated and nohz_full as configured.
# TYPE numairqd_allowed_cpus gauge
numairqd_allowed_cpus 0
# HELP numairqd_last_round_timestamp_seconds When the last reconcile round finished.
# TYPE numairqd_last_round_timestamp_seconds gauge
numairqd_last_round_timestamp_seconds 1.7e+09
# HELP numairqd_state_generation Generation of the published state: 1 after the first round, +1 every round.
# TYPE numairqd_state_generation gauge
numairqd_state_generation 1
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(tc.store, Options{PerIRQ: tc.perIRQ})
			if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(tc.want), stateNames...); err != nil {
				t.Error(err)
			}
			problems, err := testutil.CollectAndLint(stateCollector{m})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Errorf("lint %s: %s", p.Metric, p.Text)
			}
		})
	}
}

func TestSetPerIRQ(t *testing.T) {
	m := New(testStore(), Options{})
	if n := testutil.CollectAndCount(stateCollector{m}, "numairqd_irq_planned_cpu"); n != 0 {
		t.Fatalf("per-IRQ series off: got %d, want 0", n)
	}
	m.SetPerIRQ(true)
	if n := testutil.CollectAndCount(stateCollector{m}, "numairqd_irq_planned_cpu"); n != 5 {
		t.Fatalf("per-IRQ series on: got %d, want 5", n)
	}
}

func TestIRQState(t *testing.T) {
	failed := map[int]apply.Kind{1: apply.KindBusy, 2: apply.KindError}
	for _, tc := range []struct {
		q    policy.IRQ
		want string
	}{
		{policy.IRQ{Number: 1, Planned: cpumask.New(3)}, StateFailed},
		{policy.IRQ{Number: 3, Planned: cpumask.New(3)}, StatePlaced},
		{policy.IRQ{Number: 2, Managed: true}, StateManaged},
		{policy.IRQ{Number: 2}, StateIgnored}, // never written, so not failed
		{policy.IRQ{Number: 4}, StateIgnored},
		{policy.IRQ{Number: 5, NoCPU: true}, StateFailed}, // no allowed CPU: could not be placed
	} {
		if got := IRQState(tc.q, failed); got != tc.want {
			t.Errorf("IRQState(%d managed=%t planned=%q) = %s, want %s", tc.q.Number, tc.q.Managed, tc.q.Planned, got, tc.want)
		}
	}
}

// TestScrapeSeesOneState publishes plans of 16 and of 4 allowed CPUs in
// turn while 200 scrapes run: each scrape's gauges come from one State,
// so numairqd_allowed_cpus always matches the generation's parity. Run
// with -race.
func TestScrapeSeesOneState(t *testing.T) {
	var store state.Store
	m := New(&store, Options{})
	plans := [2]*policy.Plan{testPlan(), {Allowed: cpumask.New(0, 1, 2, 3)}}
	publish(&store, plans[0], nil)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
				publish(&store, plans[i%2], nil)
			}
		}
	}()
	defer func() { close(stop); <-done }()
	seen := map[float64]bool{}
	for range 200 {
		mfs, err := m.Gatherer().Gather()
		if err != nil {
			t.Fatal(err)
		}
		var gen, allowed float64
		for _, mf := range mfs {
			switch mf.GetName() {
			case "numairqd_state_generation":
				gen = mf.GetMetric()[0].GetGauge().GetValue()
			case "numairqd_allowed_cpus":
				allowed = mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		if want := map[bool]float64{true: 16, false: 4}[int(gen)%2 == 1]; allowed != want {
			t.Fatalf("generation %v scraped with %v allowed CPUs, want %v", gen, allowed, want)
		}
		seen[allowed] = true
	}
	if !seen[16] || !seen[4] {
		t.Errorf("scrapes saw only %v allowed CPUs: the publisher did not run alongside", seen)
	}
}

// TestOnBanned: IRQs left on a CPU the plan does not allow are counted,
// numairqd's apart from the kernel's, and a rule's ignored IRQs not at
// all.
func TestOnBanned(t *testing.T) {
	tree := fakesys.New(t)
	tree.AddMachine(fakesys.QEMUGuest()) // CPUs 0-7 online
	s, err := topology.NewFS(tree.Sys()).Read()
	if err != nil {
		t.Fatal(err)
	}
	all8, low := cpumask.New(0, 1, 2, 3, 4, 5, 6, 7), cpumask.New(0, 1, 2, 3)
	irq := func(n int, planned, current cpumask.Mask) policy.IRQ {
		return policy.IRQ{Number: n, Role: policy.RoleQueue, Planned: planned, Current: current, CPU: planned.First()}
	}
	plan := &policy.Plan{Allowed: low, Devices: []policy.Device{
		{Policy: config.PolicyNUMAHop, IRQs: []policy.IRQ{
			irq(1, cpumask.New(1), all8),           // written: on 1
			irq(2, cpumask.New(2), cpumask.New(6)), // write failed: still on 6
			{Number: 3, Managed: true, Current: cpumask.New(5)},
			{Number: 4, NoCPU: true, Current: all8},
		}},
		{Policy: config.PolicyIgnore, IRQs: []policy.IRQ{{Number: 5, Current: all8}}},
	}}
	st := &state.State{Machine: machine.Machine{Snapshot: s}, Plan: plan,
		Apply: apply.Result{Failed: map[int]apply.Kind{2: apply.KindBusy}}}
	if movable, managed := onBanned(st); movable != 2 || managed != 1 {
		t.Errorf("onBanned = %d movable, %d managed; want 2 (IRQs 2 and 4) and 1 (IRQ 3)", movable, managed)
	}
	st.Apply = apply.Result{DryRun: 2}
	if movable, _ := onBanned(st); movable != 3 {
		t.Errorf("dry run: %d movable, want 3 (IRQs 1, 2 and 4 where they were)", movable)
	}
	plan.Allowed = all8
	if movable, managed := onBanned(st); movable != 0 || managed != 0 {
		t.Errorf("nothing banned: %d, %d", movable, managed)
	}
}

// TestBannedCPUsBySource: numairqd_banned_cpus has one series per
// source of other tools' bans, isolated partitions among them, and
// counts online CPUs only (cri-o's padded mask bans CPUs 8-31 of this
// 8-CPU machine too).
func TestBannedCPUsBySource(t *testing.T) {
	tree := fakesys.New(t)
	tree.AddMachine(fakesys.QEMUGuest()) // CPUs 0-7 online
	s, err := topology.NewFS(tree.Sys()).Read()
	if err != nil {
		t.Fatal(err)
	}
	padded, err := cpumask.ParseHex("ffffff01") // cri-o's bytes for CPU 0 of 8
	if err != nil {
		t.Fatal(err)
	}
	var store state.Store
	store.Publish(&state.State{
		Machine: machine.Machine{Snapshot: s, Inventory: &inventory.Inventory{},
			Bans: bans.Bans{Env: padded, Default: cpumask.New(1, 2), Partitions: cpumask.New(4, 5, 6)}},
		Plan: &policy.Plan{}, Finished: roundAt,
	})
	want := `# HELP numairqd_banned_cpus Online CPUs other tools banned from device IRQs, by source: irqbalance_env (IRQBALANCE_BANNED_CPUS/CPULIST), default_smp_affinity (the online CPUs it leaves out) or isolated_partitions (cgroup v2's cpuset.cpus.isolated).
# TYPE numairqd_banned_cpus gauge
numairqd_banned_cpus{source="default_smp_affinity"} 2
numairqd_banned_cpus{source="irqbalance_env"} 1
numairqd_banned_cpus{source="isolated_partitions"} 3
`
	if err := testutil.GatherAndCompare(New(&store, Options{}).Gatherer(), strings.NewReader(want), "numairqd_banned_cpus"); err != nil {
		t.Error(err)
	}
}
