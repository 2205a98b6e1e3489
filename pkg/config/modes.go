package config

// XPSMode says whether the daemon sets the transmit steering (XPS) maps
// of a device's tx queues to follow their completion IRQs.
type XPSMode string

const (
	// XPSFollow has CPUs send on the queue whose completion IRQ is on
	// them, or on the nearest one.
	XPSFollow XPSMode = "follow"
	// XPSLeave never writes xps_cpus.
	XPSLeave XPSMode = "leave"
)

var xpsModes = []XPSMode{XPSFollow, XPSLeave}

// XPSFor is the XPS mode for a device whose rule is r (nil: no rule).
func (c *Config) XPSFor(r *Rule) XPSMode {
	if r != nil && r.XPS != "" {
		return r.XPS
	}
	return c.XPS
}

// NAPIThreadsMode says whether the daemon pins the kthreads of threaded
// NAPI to the CPUs of the IRQs they serve.
type NAPIThreadsMode string

const (
	// NAPIThreadsFollow pins each NAPI kthread to its IRQ's planned CPUs.
	NAPIThreadsFollow NAPIThreadsMode = "follow"
	// NAPIThreadsLeave never sets a NAPI kthread's affinity.
	NAPIThreadsLeave NAPIThreadsMode = "leave"
)

var napiThreadsModes = []NAPIThreadsMode{NAPIThreadsFollow, NAPIThreadsLeave}

// NAPIThreadsFor is the napi_threads mode for a device whose rule is r
// (nil: no rule).
func (c *Config) NAPIThreadsFor(r *Rule) NAPIThreadsMode {
	if r != nil && r.NAPIThreads != "" {
		return r.NAPIThreads
	}
	return c.NAPIThreads
}

// QueueCounters says whether load balancing weighs a NIC's queues by
// their own packet counters (qstats-get, else ethtool -S).
type QueueCounters string

const (
	// QueueCountersAuto uses each interface's best per-queue counters,
	// and the interrupt estimate where it has none.
	QueueCountersAuto QueueCounters = "auto"
	// QueueCountersOff uses the interrupt estimate alone.
	QueueCountersOff QueueCounters = "off"
)

var queueCountersModes = []QueueCounters{QueueCountersAuto, QueueCountersOff}

// PolicyNames are the values a rule's policy accepts, for the man page.
func PolicyNames() []string {
	out := make([]string, len(policies))
	for i, p := range policies {
		out[i] = string(p)
	}
	return out
}
