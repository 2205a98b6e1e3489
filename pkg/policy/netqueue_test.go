package policy

import (
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/inventory"
)

// TestFromNetlink: netlink's queue wins over the name's, with a note
// only where they disagree; an IRQ netlink says nothing of keeps its
// name's queue, and a control IRQ stays control.
func TestFromNetlink(t *testing.T) {
	irqs := []inventory.IRQ{
		{Number: 30, Actions: []string{"eth0-TxRx-0"}},
		{Number: 31, Actions: []string{"eth0-TxRx-1"}},
		{Number: 32, Actions: []string{"eth0-TxRx-2"}},
		{Number: 33, Actions: []string{"eth0-misc"}},
		{Number: 34, Actions: []string{"eth0"}},
		{Number: 35, Actions: []string{"eth0-rx-7"}},
		{Number: 36, Actions: []string{"eth0-TxRx-8"}},
	}
	net := map[int]inventory.NetQueue{
		30: {Interface: "eth0", Queue: 0, RX: true, TX: true}, // agrees
		31: {Interface: "eth0", Queue: 5, RX: true, TX: true}, // another index
		34: {Interface: "eth0", Queue: 3, TX: true},           // name reads as control
		35: {Interface: "eth0", Queue: 6, RX: true},
		36: {Interface: "eth0", Queue: 8, RX: true}, // only its rx queue linked: still both
	}
	classes := classify(irqs, nil)
	fromNetlink(irqs, classes, net)
	want := []struct {
		role   Role
		queue  int
		dir    Dir
		source string
		note   string
	}{
		{RoleQueue, 0, DirBoth, QueueFromNetlink, ""},
		{RoleQueue, 5, DirBoth, QueueFromNetlink, "reads as queue 1"},
		{RoleQueue, 2, DirBoth, QueueFromName, ""},
		{RoleControl, -1, DirNone, "", ""},
		{RoleQueue, 3, DirTx, QueueFromNetlink, "reads as a control IRQ"},
		{RoleQueue, 6, DirRx, QueueFromNetlink, "reads as queue 7"},
		{RoleQueue, 8, DirBoth, QueueFromNetlink, ""},
	}
	for i, w := range want {
		c := classes[i]
		if c.role != w.role || c.queue != w.queue || c.dir != w.dir || c.source != w.source ||
			(w.note == "") != (c.note == "") || !strings.Contains(c.note, w.note) {
			t.Errorf("IRQ %d %s: %v queue %d %v from %q, note %q; want %v queue %d %v from %q, note with %q",
				irqs[i].Number, irqs[i].Actions[0], c.role, c.queue, c.dir, c.source, c.note, w.role, w.queue, w.dir, w.source, w.note)
		}
	}
}
