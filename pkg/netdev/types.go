package netdev

import "strconv"

// QueueType is a queue's direction; each has its own id space.
type QueueType uint8

// The queue directions, numbered as include/uapi/linux/netdev.h's enum
// netdev_queue_type.
const (
	QueueRX QueueType = 0 // NETDEV_QUEUE_TYPE_RX
	QueueTX QueueType = 1 // NETDEV_QUEUE_TYPE_TX
)

// String returns "rx" or "tx", as netlink and ethtool spell them.
func (t QueueType) String() string {
	switch t {
	case QueueRX:
		return "rx"
	case QueueTX:
		return "tx"
	}
	return "QueueType(" + strconv.Itoa(int(t)) + ")"
}

// Stats are one queue's counters, from qstats-get since the driver last
// reconfigured it (the spec: "will only be reported for currently
// active objects"), or from ethtool -S.
type Stats struct {
	Ifindex int
	Type    QueueType
	ID      int
	// Packets and Bytes are rx-packets and rx-bytes for an RX queue,
	// tx-packets and tx-bytes for a TX one.
	Packets, Bytes uint64
}
