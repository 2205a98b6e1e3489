package apply_test

import (
	"context"
	"syscall"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
)

// TestVerifiesFollowWrites: what Apply keeps to verify. A successful
// write is kept with the count read just after it; a re-write of the
// same mask that the plan asked for (EffectiveRewrite) counts on; a new
// mask (the plan changed), or the same mask written again because a
// driver reset the IRQ (the virtio-net hotplug case), starts again at
// zero; pending and mismatched writes are kept as they were, a failed
// re-write too; verified writes and IRQs gone from the plan are
// forgotten.
func TestVerifiesFollowWrites(t *testing.T) {
	old := func(name, m string, rewrites int) policy.Verify {
		return policy.Verify{Name: name, Mask: fakesys.MustMask(t, m), Count: 10, Counted: true, Rewrites: rewrites}
	}
	state := func(q policy.IRQ, s policy.EffectiveState) policy.IRQ {
		q.EffectiveState, q.Effective = s, cpumask.New(7)
		return q
	}
	mem := policy.Memory{Verify: policy.Verifies{
		45: old("a", "3", 3), // mismatched on 3; the plan moved it to 4
		46: old("b", "5", 1),
		47: old("c", "6", 0),
		48: old("d", "1", 0),
		49: old("e", "2", 0), // gone
		50: old("f", "0", 2),
		51: old("g", "3", 3),
		53: old("i", "6", 2), // pending; the driver reset it to 0-7
	}}
	p := plan(order8,
		irq(t, 45, "a", "3", "4"),
		state(irq(t, 46, "b", "5", "5"), policy.EffectiveRewrite),
		state(irq(t, 47, "c", "6", "6"), policy.EffectivePending),
		state(irq(t, 48, "d", "1", "1"), policy.EffectiveVerified),
		state(irq(t, 50, "f", "0", "0"), policy.EffectiveRewrite),
		state(irq(t, 51, "g", "3", "3"), policy.EffectiveMismatch),
		irq(t, 52, "h", "0-7", "2"),
		state(irq(t, 53, "i", "0-7", "6"), policy.EffectivePending),
	)
	w := &fakeWriter{always: map[int]error{50: syscall.EBUSY}}
	counts := map[int]uint64{45: 99, 46: 20}
	a := apply.New(w, nil, apply.Options{Retries: -1, Interrupts: func(n int) (uint64, bool) {
		c, ok := counts[n]
		return c, ok
	}})
	res, got := a.Apply(context.Background(), p, mem)
	checkCalls(t, w.reset(), "45:4", "46:5", "50:0", "52:2", "53:6")
	if res.Written != 4 || res.Unchanged != 3 {
		t.Errorf("written %d unchanged %d, want 4 and 3 (pending, verified, mismatched)", res.Written, res.Unchanged)
	}
	want := policy.Verifies{
		45: {Name: "a", Mask: fakesys.MustMask(t, "4"), Count: 99, Counted: true}, // plan changed: re-writes reset
		46: {Name: "b", Mask: fakesys.MustMask(t, "5"), Count: 20, Counted: true, Rewrites: 2},
		47: old("c", "6", 0),
		50: old("f", "0", 2), // the re-write failed: still to re-write
		51: old("g", "3", 3),
		52: {Name: "h", Mask: fakesys.MustMask(t, "2")}, // no count: stays pending until it moves
		53: {Name: "i", Mask: fakesys.MustMask(t, "6")}, // written back after a reset: not a re-write
	}
	if len(got.Verify) != len(want) {
		t.Errorf("verify %v, want %v", got.Verify, want)
	}
	for n, v := range want {
		g, ok := got.Verify[n]
		if !ok || g.Name != v.Name || !g.Mask.Equal(v.Mask) || g.Count != v.Count || g.Counted != v.Counted || g.Rewrites != v.Rewrites {
			t.Errorf("verify[%d] = %+v, want %+v", n, g, v)
		}
	}

	// A dry run writes nothing, so it has nothing to verify.
	dry := apply.New(w, nil, apply.Options{DryRun: true})
	if _, m := dry.Apply(context.Background(), plan(order8, irq(t, 52, "h", "0-7", "2")), policy.Memory{}); m.Verify != nil {
		t.Errorf("dry run verifies %v", m.Verify)
	}
}
