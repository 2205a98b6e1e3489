package config

// XPSMode says whether the daemon sets the transmit steering (XPS) maps
// of a device's tx queues to follow where the plan puts their
// completion IRQs.
type XPSMode string

const (
	// XPSFollow writes each tx queue's xps_cpus so that CPUs send on the
	// queue whose completion IRQ is on them, or on the nearest one.
	XPSFollow XPSMode = "follow"
	// XPSLeave never writes xps_cpus: the driver's (or the user's) maps stay.
	XPSLeave XPSMode = "leave"
)

var xpsModes = []XPSMode{XPSFollow, XPSLeave}

// XPSFor is the XPS mode for a device whose rule is r (nil: no rule):
// the rule's when it sets one, else the file's.
func (c *Config) XPSFor(r *Rule) XPSMode {
	if r != nil && r.XPS != "" {
		return r.XPS
	}
	return c.XPS
}
