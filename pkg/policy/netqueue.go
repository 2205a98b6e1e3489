package policy

import (
	"fmt"

	"github.com/numairqd/numairqd/pkg/inventory"
)

// Where an IRQ's queue came from (IRQ.QueueSource).
const (
	QueueFromNetlink = "netlink" // netdev netlink: queue-get's NAPI with napi-get's IRQ
	QueueFromName    = "name"    // the built-in naming rules, or the rule's queue_regex
)

// fromNetlink makes what netdev netlink says of an IRQ (net, by IRQ
// number; inventory.Device.NetQueues) its queue over what its name
// says: the kernel knows, the name is the driver's text for humans,
// which may be stale after a rename or follow a rule no table has. The
// queue ids are the kernel's, already 0-based, so they are not shifted
// as names' are. Where the two disagree, the IRQ's queue note says what
// the name said, for the log and /plan.
func fromNetlink(irqs []inventory.IRQ, classes []class, net map[int]inventory.NetQueue) {
	for i, q := range irqs {
		c := &classes[i]
		if c.role == RoleQueue {
			c.source = QueueFromName
		}
		nq, ok := net[q.Number]
		if !ok {
			continue
		}
		switch {
		case c.role != RoleQueue:
			c.note = "its name reads as a control IRQ"
		case c.queue != nq.Queue:
			c.note = fmt.Sprintf("its name reads as queue %d", c.queue)
		}
		if c.note != "" {
			c.note = fmt.Sprintf("netlink says %s queue %d (%s); %s", nq.Interface, nq.Queue, netDir(nq), c.note)
		}
		c.role, c.queue, c.dir, c.source = RoleQueue, nq.Queue, netDir(nq), QueueFromNetlink
	}
}

// netDir is the direction of the queues netlink links to an IRQ.
func netDir(nq inventory.NetQueue) Dir {
	switch {
	case nq.RX && nq.TX:
		return DirBoth
	case nq.TX:
		return DirTx
	}
	return DirRx
}
