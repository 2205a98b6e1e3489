package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/bans"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/napi"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
	"github.com/numairqd/numairqd/pkg/topology"
)

// roundAt is when goldenState's round finished.
var roundAt = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// goldenState is an unpublished State of a fakesys QEMU guest whose plan sets every
// field /plan and /status show: null and set queue and IRQ numbers,
// empty and set masks, omitted and present optional keys.
func goldenState(t *testing.T) *state.State {
	t.Helper()
	tree := fakesys.New(t)
	tree.AddMachine(fakesys.QEMUGuest()) // CPUs 0-7 on nodes 0-3
	snap, err := topology.NewFS(tree.Sys()).Read()
	if err != nil {
		t.Fatal(err)
	}
	m := cpumask.New
	q := func(n, queue, cpu int) policy.IRQ {
		return policy.IRQ{Number: n, Name: "virtio0-input." + string(rune('0'+queue)), Role: policy.RoleQueue, Queue: queue, Dir: policy.DirBoth,
			QueueSource: policy.QueueFromName, QueueIDs: []int{queue}, Current: m(0, 1, 2, 3, 4, 5, 6, 7), Planned: m(cpu), CPU: cpu,
			Hop: 1, Distance: 20, DriversCPU: queue, DriversDistance: 30, Load: 0.25, Reason: "numa-hop: hop 1"}
	}
	mismatch := q(26, 1, 5)
	mismatch.EffectiveState, mismatch.Effective, mismatch.QueueNote = policy.EffectiveMismatch, m(0), "netlink says queue 3"
	pending := q(27, 2, 6)
	pending.EffectiveState, pending.Effective = policy.EffectivePending, m(2)
	failed := q(28, 3, 7)
	plan := &policy.Plan{
		Allowed:  m(4, 5, 6, 7),
		Excluded: []policy.Exclusion{{Source: policy.ExcludedBanned, CPUs: m(0, 1), Why: "banned_cpus"}, {Source: policy.BanEnvFile, CPUs: m(2), Why: "cri-o"}, {Source: policy.BanDefaultAffinity, CPUs: m(3), Why: "default"}},
		Full:     m(7),
		Devices: []policy.Device{
			{PCI: "0000:41:00.0", Driver: "virtio-pci", Drivers: []string{"virtio-pci", "virtio_net"}, Class: "0x020000", Interfaces: []string{"eth0"},
				Node: 2, SpreadNode: 2, Policy: config.PolicyNUMAHop, Mask: config.MaskCPU, Balance: config.BalanceLoad, Rule: "nics",
				PolicyWhy: "rule nics", LoadSource: "interrupts", Order: []int{4, 5, 6, 7},
				Taken:    []policy.Taken{{Device: "0000:42:00.0", CPUs: m(4)}},
				Locality: &policy.Locality{Mean: 15, Worst: 20, DriversMean: 25, DriversWorst: 30, Farther: 1, InPackage: 2},
				IRQs: []policy.IRQ{
					{Number: 24, Name: "virtio0-config", Role: policy.RoleControl, Queue: -1, Dir: policy.DirNone, Current: m(0, 1, 2, 3, 4, 5, 6, 7),
						Planned: m(4, 5), CPU: -1, Hop: -1, Distance: -1, DriversCPU: -1, DriversDistance: -1, Reason: "control"},
					q(25, 0, 4), mismatch, pending, failed,
					{Number: 29, Name: "virtio0-virtqueues", Role: policy.RoleControl, Queue: -1, Managed: true, Current: m(1), CPU: -1, Hop: -1,
						Distance: -1, DriversCPU: -1, DriversDistance: -1, Reason: "managed by the kernel"},
					{Number: 30, Name: "virtio0-bad", Role: policy.RoleControl, Queue: -1, Unreadable: true, CPU: -1, Hop: -1, Distance: -1,
						DriversCPU: -1, DriversDistance: -1, Reason: "unreadable"},
					{Number: 31, Name: "virtio0-nocpu", Role: policy.RoleQueue, Queue: 4, NoCPU: true, Current: m(3), CPU: -1, Hop: -1, Distance: -1,
						DriversCPU: -1, DriversDistance: -1, Reason: "no allowed CPU"},
				},
				XPS:      config.XPSMode("irq"),
				TxQueues: []policy.TxQueue{{Interface: "eth0", Queue: 0, IRQ: 25, Current: m(0), Planned: m(4), Reason: "its IRQ's CPU"}, {Interface: "eth0", Queue: 1, IRQ: -1, Reason: "left alone"}},
				XPSError: "eth1: no queues",
				NAPIMode: config.NAPIThreadsMode("irq"),
				NAPIThreads: []policy.NAPIThread{
					{Interface: "eth0", NAPIID: 8193, PID: 500, Comm: "napi/eth0-8193", Queue: 0, Kind: napi.KindRX, IRQ: 25, Source: napi.SourceNetlink,
						Current: m(0, 1, 2, 3, 4, 5, 6, 7), Planned: m(4), Reason: "its IRQ's CPU"},
					{Interface: "eth0", NAPIID: -1, PID: 501, Comm: "napi/eth0-81", Queue: -1, IRQ: -1, Source: napi.SourceProc, Current: m(1), Reason: "cut name"},
				},
				NAPIError: "eth1: gone",
			},
			{PCI: "0000:c1:00.0", Driver: "nvme", Node: 0, SpreadNode: 0, Policy: config.PolicyIgnore, Mask: config.MaskCPU,
				IRQs: []policy.IRQ{{Number: 40, Name: "nvme0q1", Role: policy.RoleQueue, Queue: 0, Current: m(0), CPU: -1, Hop: -1, Distance: -1,
					DriversCPU: -1, DriversDistance: -1, Reason: "ignore"}}},
			{Node: -1, SpreadNode: -1, Policy: config.PolicyPinned, Mask: config.MaskCPU, Rule: "timer",
				IRQs: []policy.IRQ{{Number: 1, Name: "i8042", Role: policy.RoleControl, Queue: -1, Current: m(0), Planned: m(4), CPU: -1, Hop: -1, Distance: -1,
					DriversCPU: -1, DriversDistance: -1}}},
		},
		Balance: &policy.BalanceView{Ready: true, TimeAccounting: true, CPUs: []policy.CPULoad{{CPU: 4, Fixed: 0.1, Load: 0.5}, {CPU: 5, Load: 0.25}},
			Peak: 0.5, Mean: 0.375, Queues: 4, Reset: 1,
			Proposal: &policy.Proposal{Moves: []policy.Move{{PCI: "0000:41:00.0", Queue: 1, IRQs: []int{26}, From: 4, To: 5, Load: 0.125}}, Peak: 0.4, Mean: 0.375, Gain: 0.2, Noise: 0.01}},
		Stacking:        policy.Stacking{CPU: 1, Core: 1, LLC: 4},
		DriversStacking: policy.Stacking{CPU: 2, Core: 2, LLC: 5},
	}
	cfg := config.Default()
	cfg.Source = "/etc/numairqd/numairqd.yaml"
	return &state.State{
		Machine: machine.Machine{Snapshot: snap, Inventory: nil, Consistent: true, Took: time.Millisecond,
			Bans: bans.Bans{EnvFile: "/etc/default/irqbalance", Env: m(2), Default: m(3)}, BansErr: errors.New("stale\nsecond line")},
		Plan: plan, Config: cfg, Trigger: "resync", Finished: roundAt, Planning: time.Millisecond, Applying: 2 * time.Millisecond,
		Apply: apply.Result{Writes: []apply.Outcome{{Write: policy.Write{Kind: policy.WriteIRQAffinity, IRQ: 28}, Kind: apply.KindNoSpace, Errno: "ENOSPC"}},
			Written: 2, Unchanged: 1, Failed: map[int]apply.Kind{28: apply.KindNoSpace}},
	}
}

// newAPI is the API of a fresh Metrics of store.
func newAPI(store *state.Store) *API { return New(metrics.New(store, metrics.Options{})) }

// testStore holds goldenState, published once.
func testStore(t *testing.T) *state.Store {
	var store state.Store
	store.Publish(goldenState(t))
	return &store
}

// republish publishes a copy of store's newest State: the next
// generation, the same plan.
func republish(store *state.Store) {
	st := *store.Load()
	store.Publish(&st)
}

func get(t *testing.T, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

// TestGoldenJSON pins the bytes of /plan and /status: the documents
// scripts read must not change when the types behind them do. Decoded
// into the types `numairqd status` reads them with and encoded again,
// they come out the same.
func TestGoldenJSON(t *testing.T) {
	h := New(metrics.New(testStore(t), metrics.Options{Build: metrics.Build{Version: "1.2.3"}})).Handler()
	for _, path := range []string{"/plan", "/status"} {
		rec := get(t, h, path)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		file := filepath.Join("testdata", path[1:]+".golden.json")
		if *update {
			if err := os.WriteFile(file, rec.Body.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(rec.Body.Bytes(), want) {
			t.Errorf("%s differs from %s:\n%s", path, file, rec.Body)
		}
		var v any = &Status{}
		if path == "/plan" {
			v = &policy.Doc{}
		}
		if err := json.Unmarshal(want, v); err != nil {
			t.Fatalf("decoding %s: %v", file, err)
		}
		again, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if again = append(again, '\n'); !bytes.Equal(again, want) {
			t.Errorf("%s decoded and encoded again differs:\n%s", file, again)
		}
	}
}
