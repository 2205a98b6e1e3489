package config

// NAPIThreadsMode says whether the daemon pins the kthreads of threaded
// NAPI on a device's interfaces to the CPUs of the IRQs they serve.
type NAPIThreadsMode string

const (
	// NAPIThreadsFollow pins each NAPI kthread to its IRQ's planned
	// CPUs, as the kernel never moves one itself.
	NAPIThreadsFollow NAPIThreadsMode = "follow"
	// NAPIThreadsLeave never sets a NAPI kthread's affinity.
	NAPIThreadsLeave NAPIThreadsMode = "leave"
)

var napiThreadsModes = []NAPIThreadsMode{NAPIThreadsFollow, NAPIThreadsLeave}

// NAPIThreadsFor is the napi_threads mode for a device whose rule is r
// (nil: no rule): the rule's when it sets one, else the file's.
func (c *Config) NAPIThreadsFor(r *Rule) NAPIThreadsMode {
	if r != nil && r.NAPIThreads != "" {
		return r.NAPIThreads
	}
	return c.NAPIThreads
}
