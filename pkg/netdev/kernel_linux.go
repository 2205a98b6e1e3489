package netdev

// Kernel asks the running kernel (the inventory's Netdev on a host):
// each call is one bounded dump.
type Kernel struct{}

// Queues dumps queue-get.
func (Kernel) Queues() ([]Queue, error) { return DumpQueues() }

// NAPIs dumps napi-get.
func (Kernel) NAPIs() ([]NAPI, error) { return DumpNAPIs() }
