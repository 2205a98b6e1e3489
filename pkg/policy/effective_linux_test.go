package policy_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys/fakeplan"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/policy"
)

// placedFixture is the six-pair virtio NIC on node 2 with every IRQ
// already where the plan puts it (queue 0, IRQ 25, on CPU 4), read back.
func placedFixture(t *testing.T) balanced {
	t.Helper()
	f := newFixture(t, fourNodes())
	f.virtio("0000:41:00.0", 0, 6, 24, 2)
	for _, w := range f.plan(nil).Writes() {
		if w.Kind != policy.WriteIRQAffinity {
			continue
		}
		path := f.tree.Path("proc/irq/" + strconv.Itoa(w.IRQ) + "/smp_affinity_list")
		if err := os.WriteFile(path, []byte(w.After.String()+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return readBack(t, f)
}

func irqOf(t *testing.T, p *policy.Plan, n int) policy.IRQ {
	t.Helper()
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			if q.Number == n {
				return q
			}
		}
	}
	t.Fatalf("no IRQ %d in the plan", n)
	return policy.IRQ{}
}

// TestEffectiveVerdicts: IRQ 25 was written CPU 4 (count 10 then); what
// the plan makes of each effective reading.
func TestEffectiveVerdicts(t *testing.T) {
	b := placedFixture(t)
	on := func(cpus string, count uint64) inventory.Effective {
		m, _ := cpumask.ParseList(cpus)
		return inventory.Effective{CPUs: m, Count: count, Counted: true}
	}
	four := cpumask.New(4)
	written := policy.Verify{Name: "virtio0-input.0", Mask: four, Count: 10, Counted: true}
	with := func(f func(*policy.Verify)) policy.Verify { v := written; f(&v); return v }
	tests := []struct {
		name   string
		v      *policy.Verify // nil: no write to verify
		eff    inventory.Effective
		want   policy.EffectiveState
		write  bool
		reason string
	}{
		{"no write to verify", nil, on("3", 11), policy.EffectiveUnchecked, false, ""},
		{"moved", &written, on("4", 10), policy.EffectiveVerified, false, ""},
		{"not fired since the write", &written, on("3", 10), policy.EffectivePending, false, "effective CPU 3 outside planned 4, not fired since the write"},
		{"count unknown at the write", ptr(with(func(v *policy.Verify) { v.Counted = false })), on("3", 50), policy.EffectivePending, false, "not fired"},
		{"count unknown now", &written, inventory.Effective{CPUs: cpumask.New(3)}, policy.EffectivePending, false, "not fired"},
		{"fired, stayed", &written, on("3", 11), policy.EffectiveRewrite, true, "effective CPU 3 outside planned 4 after firing; re-write 1/3"},
		{"fired, third re-write", ptr(with(func(v *policy.Verify) { v.Rewrites = 2 })), on("3", 11), policy.EffectiveRewrite, true, "re-write 3/3"},
		{"re-writes used up", ptr(with(func(v *policy.Verify) { v.Rewrites = 3 })), on("3", 11), policy.EffectiveMismatch, false, "after 3 re-writes"},
		{"multi-CPU effective", &written, on("2-3", 11), policy.EffectiveRewrite, true, "effective CPUs 2-3 outside"},
		{"another mask was written", ptr(with(func(v *policy.Verify) { v.Mask = cpumask.New(5) })), on("3", 11), policy.EffectiveUnchecked, false, ""},
		{"another IRQ under the number", ptr(with(func(v *policy.Verify) { v.Name = "eth9" })), on("3", 11), policy.EffectiveUnchecked, false, ""},
		{"effective unreadable", &written, inventory.Effective{Err: "read /proc/irq/25/effective_affinity_list: malformed"}, policy.EffectiveUnchecked, false, "effective CPUs unknown: read /proc/irq/25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mem policy.Memory
			if tt.v != nil {
				mem.Verify = policy.Verifies{25: *tt.v}
			}
			bb := balanced{fakeplan.Machine{Snapshot: b.Snapshot, Inventory: b.Inventory.WithEffective(map[int]inventory.Effective{25: tt.eff})}}
			p := bb.Plan(nil, mem, policy.Balancing{})
			q := irqOf(t, p, 25)
			if q.EffectiveState != tt.want || !q.Effective.Equal(tt.eff.CPUs) {
				t.Errorf("state %v effective %s, want %v %s", q.EffectiveState, q.Effective, tt.want, tt.eff.CPUs)
			}
			if !strings.Contains(q.Reason, tt.reason) || tt.reason == "" && strings.Contains(q.Reason, "effective") {
				t.Errorf("reason %q, want %q", q.Reason, tt.reason)
			}
			var ws []policy.Write
			for _, w := range p.Writes() {
				if w.Kind == policy.WriteIRQAffinity {
					ws = append(ws, w)
				}
			}
			if wrote := len(ws) == 1 && ws[0].IRQ == 25 && ws[0].After.Equal(four); wrote != tt.write || len(ws) > 1 {
				t.Errorf("writes %v, want IRQ 25 re-written: %v", ws, tt.write)
			}
			if tt.write && p.Unchanged() != 12 || !tt.write && p.Unchanged() != 13 {
				t.Errorf("unchanged %d: a re-written IRQ is not unchanged", p.Unchanged())
			}
			doc := irqDoc(t, p.Doc(), 25)
			if doc.EffectiveState != tt.want || !doc.Effective.Equal(tt.eff.CPUs) {
				t.Errorf("doc: effective %q state %q", doc.Effective, doc.EffectiveState)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func irqDoc(t *testing.T, doc policy.Doc, n int) policy.IRQ {
	t.Helper()
	for _, d := range doc.Devices {
		for _, q := range d.IRQs {
			if q.Number == n {
				return q
			}
		}
	}
	t.Fatalf("no IRQ %d in the doc", n)
	return policy.IRQ{}
}

// TestVerifiesFresh: a fresh read forgets the re-writes, not the writes.
func TestVerifiesFresh(t *testing.T) {
	v := policy.Verifies{25: {Name: "a", Mask: cpumask.New(4), Count: 7, Counted: true, Rewrites: 3}}
	f := v.Fresh()
	if f[25].Rewrites != 0 || f[25].Count != 7 || !f[25].Mask.Equal(cpumask.New(4)) || v[25].Rewrites != 3 {
		t.Errorf("Fresh = %+v (from %+v), want the write with no re-writes, the original unchanged", f[25], v[25])
	}
	if got := v.Masks(); len(got) != 1 || !got[25].Equal(cpumask.New(4)) {
		t.Errorf("Masks = %v", got)
	}
	if policy.Verifies(nil).Fresh() != nil {
		t.Error("Fresh of none is not none")
	}
}
