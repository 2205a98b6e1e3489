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
			c.note = fmt.Sprintf("netlink says %s queue %d (%s); %s", nq.Interface, nq.Queue, netDir(nq.RX, nq.TX), c.note)
		}
		dir := netDir(nq.RX, nq.TX)
		if c.note == "" {
			// Where the two agree on the queue, a direction either
			// knows is served: a driver may link only its rx queue
			// to the NAPI of a combined vector.
			dir = netDir(nq.RX || c.dir.Receives(), nq.TX || c.dir.Transmits())
		}
		c.role, c.queue, c.dir, c.source = RoleQueue, nq.Queue, dir, QueueFromNetlink
	}
}

// linkIDs gives each IRQ of d planned from netlink the queue ids
// netlink links to it (IRQ.QueueIDs), for shareByPackets.
func linkIDs(d *Device, net map[int]inventory.NetQueue) {
	for i := range d.IRQs {
		if q := &d.IRQs[i]; q.QueueSource == QueueFromNetlink {
			q.QueueIDs = net[q.Number].IDs
		}
	}
}

// netDir is the direction of an IRQ that serves rx, tx or both.
func netDir(rx, tx bool) Dir {
	switch {
	case rx && tx:
		return DirBoth
	case tx:
		return DirTx
	}
	return DirRx
}
