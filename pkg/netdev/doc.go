// Package netdev reads what the kernel's "netdev" generic netlink
// family says about a host's queues: which NAPI serves each RX and TX
// queue (queue-get, 6.8+), which IRQ and kthread each NAPI has
// (napi-get, 6.8+), and how many packets and bytes each queue moved
// (qstats-get, 6.9+, drivers with per-queue stat ops). sysfs names a
// queue's IRQ only through driver-specific IRQ names; the family says
// it where the driver links them (netif_queue_set_napi,
// netif_napi_set_irq).
//
// An older kernel gives an error for which Unavailable is true, and
// callers fall back to sysfs and /proc. Every dump covers the
// interfaces of the caller's network namespace that are up, is bounded
// in time (Timeout) and size (MaxReplies), and a reply that does not
// parse is an error wrapping kernfs.ErrMalformed naming the attribute.
// Where qstats-get has nothing, EthtoolQueueStats reads the driver's
// per-queue counters from ethtool -S by one naming rule per driver
// family (ethtool_rules.go). The package only reads.
package netdev
