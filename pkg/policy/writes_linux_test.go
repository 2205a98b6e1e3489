package policy_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
)

// TestWrites: the plan lists exactly the IRQs it changes, in plan
// order, and counts the others it places.
func TestWrites(t *testing.T) {
	on := map[int]string{25: "4", 26: "4", 27: "5", 28: "5", 29: "6"}
	p := sixQueues(t, false, on).Plan(nil, policy.Memory{Full: cpumask.New(5)}, policy.Balancing{})
	all := fakesys.MustMask(t, "0-7")
	w := func(irq int, name string, before, after cpumask.Mask) policy.Write {
		return policy.Write{Kind: policy.WriteIRQAffinity, IRQ: irq, Name: name, Device: "0000:41:00.0", Before: before, After: after}
	}
	want := []policy.Write{
		w(24, "virtio0-config", all, cpumask.New(4)),
		w(30, "virtio0-output.2", all, cpumask.New(6)),
		w(31, "virtio0-input.3", all, cpumask.New(7)),
		w(32, "virtio0-output.3", all, cpumask.New(7)),
		w(33, "virtio0-input.4", all, cpumask.New(0)),
		w(34, "virtio0-output.4", all, cpumask.New(0)),
		w(35, "virtio0-input.5", all, cpumask.New(1)),
		w(36, "virtio0-output.5", all, cpumask.New(1)),
	}
	// The tx queues' XPS writes are TestXPS's.
	got := slices.DeleteFunc(p.Writes(), func(w policy.Write) bool { return w.Kind != policy.WriteIRQAffinity })
	if !slices.EqualFunc(got, want, func(a, b policy.Write) bool {
		return a.Kind == b.Kind && a.IRQ == b.IRQ && a.Name == b.Name && a.Device == b.Device && a.Before.Equal(b.Before) && a.After.Equal(b.After)
	}) {
		t.Errorf("writes:\n%s\nwant:\n%s", writeList(got), writeList(want))
	}
	if n := p.Unchanged(); n != 5 {
		t.Errorf("%d unchanged, want 5 (IRQs 25-29)", n)
	}
	if s := policy.WriteIRQAffinity.String(); s != "irq_affinity" {
		t.Errorf("WriteIRQAffinity is %q", s)
	}
}

func writeList(ws []policy.Write) string {
	var b strings.Builder
	for _, w := range ws {
		fmt.Fprintf(&b, "  %s %d %s %s: %s -> %s\n", w.Kind, w.IRQ, w.Name, w.Device, w.Before, w.After)
	}
	return b.String()
}
