package netdev

// The family, its commands and attributes (include/uapi/linux/netdev.h).
const (
	familyName    = "netdev" // NETDEV_FAMILY_NAME
	familyVersion = 1        // NETDEV_FAMILY_VERSION

	cmdQueueGet  = 10 // NETDEV_CMD_QUEUE_GET (6.8+)
	cmdNAPIGet   = 11 // NETDEV_CMD_NAPI_GET (6.8+)
	cmdQStatsGet = 12 // NETDEV_CMD_QSTATS_GET (6.9+)

	attrNAPIIfindex = 1 // NETDEV_A_NAPI_IFINDEX
	attrNAPIID      = 2 // NETDEV_A_NAPI_ID
	attrNAPIIRQ     = 3 // NETDEV_A_NAPI_IRQ, when the driver set it
	attrNAPIPID     = 4 // NETDEV_A_NAPI_PID, when threaded

	attrQueueID      = 1 // NETDEV_A_QUEUE_ID
	attrQueueIfindex = 2 // NETDEV_A_QUEUE_IFINDEX
	attrQueueType    = 3 // NETDEV_A_QUEUE_TYPE, enum netdev_queue_type
	attrQueueNAPIID  = 4 // NETDEV_A_QUEUE_NAPI_ID, when the driver linked one

	attrQStatsIfindex   = 1  // NETDEV_A_QSTATS_IFINDEX
	attrQStatsQueueType = 2  // NETDEV_A_QSTATS_QUEUE_TYPE
	attrQStatsQueueID   = 3  // NETDEV_A_QSTATS_QUEUE_ID
	attrQStatsScope     = 4  // NETDEV_A_QSTATS_SCOPE, request only
	attrQStatsRXPackets = 8  // NETDEV_A_QSTATS_RX_PACKETS
	attrQStatsRXBytes   = 9  // NETDEV_A_QSTATS_RX_BYTES
	attrQStatsTXPackets = 10 // NETDEV_A_QSTATS_TX_PACKETS
	attrQStatsTXBytes   = 11 // NETDEV_A_QSTATS_TX_BYTES

	qstatsScopeQueue = 1 // NETDEV_QSTATS_SCOPE_QUEUE
)

// Queue is one configured (real_num_*) queue of an interface that is up.
type Queue struct {
	Ifindex int
	Type    QueueType
	ID      int // 0 .. count-1, per Type
	// NAPI is the id of the NAPI serving the queue; -1 when the driver
	// links none, or a TX-only NAPI without an id (0 before 6.14).
	NAPI int
}

// NAPI is one NAPI instance with an id, of an interface that is up.
type NAPI struct {
	Ifindex, ID int
	IRQ         int // the IRQ the driver set, -1 when none
	// PID is the NAPI kthread's pid when threaded, -1 when not; 0 when
	// outside the caller's PID namespace on kernels that translate it.
	PID int
}
