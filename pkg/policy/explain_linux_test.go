package policy_test

import (
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
)

// TestExcludedBySource: every CPU left out of the allowed set is named
// under each source that left it out, and only online CPUs are.
func TestExcludedBySource(t *testing.T) {
	m := fourNodes()
	m.Isolated, m.NohzFull = "2-3", "3"
	f := newFixture(t, m)
	f.virtio("0000:41:00.0", 0, 2, 24, 2)
	cfg := parseConfig(t, "banned_cpus: 7,9\n")
	tools := []policy.ToolBan{
		{Source: policy.BanEnvFile, Path: "/etc/sysconfig/irqbalance", CPUs: cpumask.New(0, 7)},
		{Source: policy.BanDefaultAffinity, CPUs: cpumask.New(6)},
	}
	b := readBack(t, f)
	p := policy.Compute(b.Snapshot, b.Inventory, cfg, tools, policy.Memory{}, policy.Balancing{})
	if got := p.Allowed.String(); got != "1,4-5" {
		t.Fatalf("allowed %s, want 1,4-5", got)
	}
	want := []struct{ source, cpus, why string }{
		{policy.ExcludedBanned, "7", "banned_cpus"},
		{policy.BanEnvFile, "0,7", "/etc/sysconfig/irqbalance (cri-o and tuned"},
		{policy.BanDefaultAffinity, "6", "default_smp_affinity (cri-o clears"},
		{policy.ExcludedIsolated, "2-3", "exclude_isolated"},
		{policy.ExcludedNohzFull, "3", "exclude_nohz_full"},
	}
	if len(p.Excluded) != len(want) {
		t.Fatalf("excluded %+v, want %d sources", p.Excluded, len(want))
	}
	for i, w := range want {
		e := p.Excluded[i]
		if e.Source != w.source || e.CPUs.String() != w.cpus || !strings.Contains(e.Why, w.why) {
			t.Errorf("excluded[%d] = %s %s %q, want %s %s and %q", i, e.Source, e.CPUs, e.Why, w.source, w.cpus, w.why)
		}
	}
	doc := p.Doc()
	if len(doc.Excluded) != len(want) || doc.Excluded[1].CPUs.String() != "0,7" || doc.Excluded[1].Source != "irqbalance_env" {
		t.Errorf("doc excluded %+v", doc.Excluded)
	}

	// Not excluding isolated CPUs names them nowhere.
	cfg.ExcludeIsolated, cfg.ExcludeNohzFull = false, false
	p = f.plan(cfg)
	if len(p.Excluded) != 1 || p.Excluded[0].Source != policy.ExcludedBanned || p.Allowed.String() != "0-6" {
		t.Errorf("with isolated CPUs allowed: allowed %s, excluded %+v", p.Allowed, p.Excluded)
	}
}

// TestPolicyWhy: auto's choice says what it weighed, a rule's policy
// names the rule.
func TestPolicyWhy(t *testing.T) {
	f := newFixture(t, fourNodes())
	f.virtio("0000:41:00.0", 0, 8, 24, 2) // 8 queues on 7 allowed CPUs: linear
	f.virtio("0000:42:00.0", 1, 2, 60, 1) // 2 queues: numa-hop
	f.virtio("0000:43:00.0", 2, 2, 70, 0) // named by a rule
	p := f.plan(parseConfig(t, "banned_cpus: 7\ndevices:\n  - name: storage\n    match: {pci: \"0000:43:00.0\"}\n    policy: numa-hop\n"))
	for pci, want := range map[string]string{
		"0000:41:00.0": "auto (the default) chose linear: 8 queues >= 7 allowed CPUs",
		"0000:42:00.0": "auto (the default) chose numa-hop: 2 queues < 7 allowed CPUs, so the queues go to node 1's CPUs first",
		"0000:43:00.0": `numa-hop, set by rule "storage" (line 3)`,
	} {
		d := device(t, p, pci)
		if !strings.HasPrefix(d.PolicyWhy, want) {
			t.Errorf("%s: policy why %q, want %q...", pci, d.PolicyWhy, want)
		}
	}
	if d := device(t, p, "0000:41:00.0"); d.Policy != config.PolicyLinear {
		t.Errorf("8 queues on 7 CPUs: policy %s", d.Policy)
	}
	// pinned names the rule's CPUs and those of them not allowed.
	for cpus, want := range map[string]string{
		"4-5": `pinned, set by rule at line 3: CPUs 4-5`,
		"6-7": `pinned, set by rule at line 3: CPUs 6-7, of which 6 allowed`,
		"7":   `pinned, set by rule at line 3: CPUs 7, of which none allowed`,
	} {
		p := f.plan(parseConfig(t, "banned_cpus: 7\ndevices:\n  - match: {pci: \"0000:41:00.0\"}\n    policy: pinned\n    cpus: "+cpus+"\n"))
		if d := device(t, p, "0000:41:00.0"); d.PolicyWhy != want {
			t.Errorf("pinned to %s: policy why %q, want %q", cpus, d.PolicyWhy, want)
		}
	}
}

// TestTakenShapesTheSpread: a device whose queues are not all on its
// drivers' CPUs names the other devices holding those CPUs, and only
// those; a device placed exactly as its driver would names none.
func TestTakenShapesTheSpread(t *testing.T) {
	f := newFixture(t, fourNodes())
	f.virtio("0000:41:00.0", 0, 2, 24, 2) // node 2: its driver's CPUs 4 5
	f.virtio("0000:42:00.0", 1, 4, 40, 3) // node 3: 6 7 4 5; 4 and 5 hold queues, 6 and 7 are nearer
	f.virtio("0000:43:00.0", 2, 2, 60, 0) // node 0: 0 1, nobody else's
	p := f.plan(nil)
	first := device(t, p, "0000:41:00.0")
	wantQueues(t, first, "4", "5")
	second := device(t, p, "0000:42:00.0")
	wantQueues(t, second, "6", "7", "6", "7")
	if len(second.Taken) != 1 || second.Taken[0].Device != "0000:41:00.0" || second.Taken[0].CPUs.String() != "4-5" {
		t.Errorf("second device: taken %+v, want 4-5 by 0000:41:00.0", second.Taken)
	}
	for _, pci := range []string{"0000:41:00.0", "0000:43:00.0"} {
		if d := device(t, p, pci); d.Taken != nil {
			t.Errorf("%s, on its drivers' CPUs: taken %+v", pci, d.Taken)
		}
	}
	doc := p.Doc()
	if tk := doc.Devices[1].Taken; len(tk) != 1 || tk[0].CPUs.String() != "4-5" {
		t.Errorf("doc taken %+v", tk)
	}
	// A linear device reads no counts: nothing shaped it.
	f = newFixture(t, fourNodes())
	f.virtio("0000:41:00.0", 0, 8, 24, 2)
	f.virtio("0000:42:00.0", 1, 8, 60, 1)
	p = f.plan(parseConfig(t, "devices:\n  - match: {driver: virtio-pci}\n    policy: linear\n"))
	if d := device(t, p, "0000:42:00.0"); d.Taken != nil {
		t.Errorf("linear: taken %+v", d.Taken)
	}
}
