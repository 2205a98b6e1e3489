package netdev

import "strconv"

// QueueType says which direction of a device queue a counter belongs to.
type QueueType uint8

// The queue directions, numbered as the netdev netlink family numbers them.
const (
	QueueRX QueueType = 0
	QueueTX QueueType = 1
)

// String returns "rx" or "tx", as netlink and ethtool spell them.
func (t QueueType) String() string {
	switch t {
	case QueueRX:
		return "rx"
	case QueueTX:
		return "tx"
	}
	return "queuetype(" + strconv.Itoa(int(t)) + ")"
}

// Stats is one queue's counters since the device came up.
type Stats struct {
	Ifindex        int
	Type           QueueType
	ID             int
	Packets, Bytes uint64
}
