package config

// QueueCounters says whether load balancing weighs a NIC's queues by
// their own packet counters (the kernel's qstats-get, else the driver's
// ethtool -S) or by the interrupt estimate alone.
type QueueCounters string

const (
	// QueueCountersAuto uses the best per-queue counters each interface
	// has, and the interrupt estimate where it has none.
	QueueCountersAuto QueueCounters = "auto"
	// QueueCountersOff uses the interrupt estimate alone: for a driver
	// whose counters mislead, or to compare the two.
	QueueCountersOff QueueCounters = "off"
)

var queueCountersModes = []QueueCounters{QueueCountersAuto, QueueCountersOff}
