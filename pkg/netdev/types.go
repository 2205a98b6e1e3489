package netdev

import "strconv"

// QueueType is a queue's direction; each has its own id space.
type QueueType uint8

// The queue directions, numbered as enum netdev_queue_type.
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

// Stats are one queue's counters, from qstats-get or ethtool -S.
type Stats struct {
	Ifindex        int
	Type           QueueType
	ID             int
	Packets, Bytes uint64
}
