package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/bans"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
	"github.com/numairqd/numairqd/pkg/topology"
)

// TestStatusEndpoint: /status is 503 before a round, then names every
// source of bans (the config's banned_cpus, isolcpus, nohz_full,
// irqbalance's env file, default_smp_affinity, isolated partitions), the round, the counts
// by state, and each failed or mismatched IRQ with its error.
func TestStatusEndpoint(t *testing.T) {
	var store state.Store
	h := New(metrics.New(&store, metrics.Options{Build: metrics.Build{Version: "9.9.9-1"}})).Handler()
	if rec := get(t, h, "/status"); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("before a round: %d, want 503", rec.Code)
	}

	tree := fakesys.New(t)
	tree.AddMachine(fakesys.QEMUGuest()) // CPUs 0-7 on nodes 0-3
	tree.WriteFile("sys/devices/system/cpu/isolated", "3\n")
	tree.WriteFile("sys/devices/system/cpu/nohz_full", "5-6\n")
	snap, err := topology.NewFS(tree.Sys()).Read()
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Source, cfg.BannedCPUs = "/etc/numairqd/numairqd.yaml", cpumask.New(7, 9) // 9 is not online
	tools := []policy.ToolBan{{Source: policy.BanEnvFile, Path: "/etc/default/irqbalance", CPUs: cpumask.New(0)},
		{Source: policy.BanDefaultAffinity, CPUs: cpumask.New(1)}, {Source: policy.BanIsolatedPartitions, CPUs: cpumask.New(6)}}
	// The bans by source are the planner's, as a round computes them.
	excluded := func(cfg *config.Config) []policy.Exclusion {
		return policy.Compute(snap, &inventory.Inventory{}, cfg, tools, policy.Memory{}, policy.Balancing{}).Excluded
	}
	q := func(n, cpu int) policy.IRQ {
		return policy.IRQ{Number: n, Name: "q", Role: policy.RoleQueue, Queue: n - 100, Current: cpumask.New(0, 1, 2), Planned: cpumask.New(cpu), CPU: cpu}
	}
	mismatch := q(102, 4)
	mismatch.EffectiveState, mismatch.Effective = policy.EffectiveMismatch, cpumask.New(0)
	pending := q(103, 2)
	pending.EffectiveState = policy.EffectivePending
	plan := &policy.Plan{Allowed: cpumask.New(2, 4), Excluded: excluded(cfg), Devices: []policy.Device{{PCI: "0000:41:00.0", Policy: config.PolicyNUMAHop,
		IRQs: []policy.IRQ{q(100, 2), q(101, 4), mismatch, pending, {Number: 104, Managed: true, Current: cpumask.New(3)}}}}}
	failedWrite := apply.Outcome{Write: policy.Write{Kind: policy.WriteIRQAffinity, IRQ: 101}, Kind: apply.KindNoSpace, Errno: "ENOSPC"}
	store.Publish(&state.State{
		Machine: machine.Machine{Snapshot: snap, Consistent: true, Took: time.Millisecond,
			Bans: bans.Bans{EnvFile: "/etc/default/irqbalance", Env: cpumask.New(0), Default: cpumask.New(1), Partitions: cpumask.New(6)}, BansErr: errors.New("stale")},
		Plan: plan, Config: cfg, DryRun: true, Trigger: "resync", Finished: roundAt, Planning: time.Millisecond,
		Apply: apply.Result{Writes: []apply.Outcome{failedWrite}, Written: 2, Unchanged: 1, Failed: map[int]apply.Kind{101: apply.KindNoSpace}},
	})

	rec := get(t, h, "/status")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("/status: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"version", "generation", "trigger", "finished", "took_seconds", "dry_run", "mode", "config", "consistent",
		"online", "allowed", "nodes", "bans", "bans_error", "irqs", "writes", "failed", "managed_on_banned"} {
		if _, ok := got[key]; !ok {
			t.Errorf("/status has no %q", key)
		}
	}
	if got["version"] != "9.9.9-1" {
		t.Errorf("/status version %v, want numairqd_build_info's 9.9.9-1", got["version"])
	}
	var s Status
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if s.Generation != 1 || s.Trigger != "resync" || !s.Finished.Equal(roundAt) || s.TookSeconds != 0.002 || !s.DryRun ||
		s.Config != cfg.Source || s.Online != "0-7" || s.Allowed != "2,4" || s.BansError != "stale" || len(s.Nodes) != 4 {
		t.Errorf("round fields: %+v", s)
	}
	wantBans := []StatusBan{{"banned_cpus", "7", cfg.Source}, {"isolated", "3", ""}, {"nohz_full", "5-6", ""},
		{"irqbalance_env", "0", "/etc/default/irqbalance"}, {"default_smp_affinity", "1", ""}, {"isolated_partitions", "6", ""}}
	if !reflect.DeepEqual(s.Bans, wantBans) {
		t.Errorf("bans %+v\nwant %+v", s.Bans, wantBans)
	}
	wantIRQs := map[string]int{"placed": 2, "managed": 1, "ignored": 0, "failed": 1, "effective_mismatch": 1, "effective_pending": 1}
	if !reflect.DeepEqual(s.IRQs, wantIRQs) {
		t.Errorf("irqs %v, want %v", s.IRQs, wantIRQs)
	}
	wantFailed := []StatusFailed{
		{IRQ: 101, Name: "q", Device: "0000:41:00.0", State: "failed", Kind: "no_space", Errno: "ENOSPC", Planned: "4"},
		{IRQ: 102, Name: "q", Device: "0000:41:00.0", State: "effective_mismatch", Planned: "4", Effective: "0"},
	}
	if !reflect.DeepEqual(s.Failed, wantFailed) {
		t.Errorf("failed %+v\nwant %+v", s.Failed, wantFailed)
	}
	if s.Writes != (StatusWrites{Written: 2, Unchanged: 1}) || !reflect.DeepEqual(s.ManagedOnBanned, []int{104}) {
		t.Errorf("writes %+v, managed on banned %v", s.Writes, s.ManagedOnBanned)
	}

	// A config that keeps isolated and nohz_full CPUs does not name them.
	cfg2 := *cfg
	cfg2.ExcludeIsolated, cfg2.ExcludeNohzFull = false, false
	st := *store.Load()
	p2 := *st.Plan
	p2.Excluded = excluded(&cfg2)
	st.Config, st.Plan = &cfg2, &p2
	for _, b := range NewStatus(&st, "").Bans {
		if b.Source == "isolated" || b.Source == "nohz_full" {
			t.Errorf("bans name %s though the config does not exclude it", b.Source)
		}
	}
}

// TestStatusRejectedAndBootID: /status carries the machine's boot_id
// and a rejected config with its error and time until a successful
// load clears it; ReadBootID reads procfs's and is "" without one.
func TestStatusRejectedAndBootID(t *testing.T) {
	tree := fakesys.New(t)
	if id := ReadBootID(tree.Proc()); id != "" {
		t.Errorf("no boot_id file: %q, want \"\"", id)
	}
	tree.WriteFile("proc/sys/kernel/random/boot_id", "00e22247-b1d9-4bca-b8d4-2c9da89aac0f\n")
	id := ReadBootID(tree.Proc())
	if id != "00e22247-b1d9-4bca-b8d4-2c9da89aac0f" {
		t.Errorf("ReadBootID = %q", id)
	}
	var store state.Store
	store.Publish(&state.State{Plan: &policy.Plan{}, Config: config.Default(), Finished: time.Unix(1000, 0)})
	m := metrics.New(&store, metrics.Options{BootID: id})
	h := New(m).Handler()
	at := time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC)
	m.ConfigRejected(errors.New("/etc/numairqd/numairqd.yaml:3: xps: unknown value"), at)
	var s Status
	if err := json.Unmarshal(get(t, h, "/status").Body.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if s.BootID != id || s.ConfigRejected == nil || !s.ConfigRejected.At.Equal(at) ||
		s.ConfigRejected.Error != "/etc/numairqd/numairqd.yaml:3: xps: unknown value" {
		t.Errorf("boot_id %q, config_rejected %+v", s.BootID, s.ConfigRejected)
	}
	m.ConfigReload(true, at.Add(time.Minute))
	body := get(t, h, "/status").Body.String()
	if strings.Contains(body, "config_rejected") {
		t.Errorf("after a successful load: %s", body)
	}
}
