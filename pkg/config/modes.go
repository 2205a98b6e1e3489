package config

// Mode says whether numairqd writes what it plans.
type Mode string

const (
	// ModeEnforce writes the plan: affinities, XPS maps, NAPI threads.
	ModeEnforce Mode = "enforce"
	// ModeObserve plans, logs and serves what it would write, as
	// --dry-run does, and writes nothing (restore_on_exit neither).
	ModeObserve Mode = "observe"
)

var modes = []Mode{ModeEnforce, ModeObserve}

// XPSMode says whether tx queues' XPS maps follow their completion IRQs.
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

// NAPIThreadsMode says whether NAPI kthreads are pinned to their IRQ's CPUs.
type NAPIThreadsMode string

const (
	// NAPIThreadsFollow pins each NAPI kthread to its IRQ's planned CPUs.
	NAPIThreadsFollow NAPIThreadsMode = "follow"
	// NAPIThreadsLeave never sets a NAPI kthread's affinity.
	NAPIThreadsLeave NAPIThreadsMode = "leave"
)

var napiThreadsModes = []NAPIThreadsMode{NAPIThreadsFollow, NAPIThreadsLeave}

// NAPIThreadsFor is the napi_threads mode for a device whose rule is r.
func (c *Config) NAPIThreadsFor(r *Rule) NAPIThreadsMode {
	if r != nil && r.NAPIThreads != "" {
		return r.NAPIThreads
	}
	return c.NAPIThreads
}

// QueueCounters says whether NIC queues are weighed by their own counters.
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
