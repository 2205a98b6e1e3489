// Package netdev reads what the kernel's "netdev" generic netlink
// family says about a host's queues: which NAPI serves each RX and TX
// queue (queue-get), which IRQ and kthread each NAPI has (napi-get),
// and how many packets and bytes each queue moved (qstats-get).
//
// Why: sysfs names a queue's IRQ only through the driver's IRQ names,
// which differ by driver and say nothing of TX, and /proc shows a NAPI
// thread only by a name cut to 15 bytes (pkg/napi). The family answers
// the question directly, where the driver links them
// (netif_queue_set_napi, netif_napi_set_irq), on the kernels that have
// it:
//
//   - the family itself, with dev-get and the "mgmt" group: 6.3;
//   - queue-get and napi-get: 6.8;
//   - qstats-get: 6.9, and only for drivers with per-queue stat ops
//     (netdev_stat_ops); the others are left out of the dump.
//
// An older kernel answers with an error for which Unavailable is true,
// and callers fall back to what sysfs and /proc tell. Every dump covers
// all interfaces of the caller's network namespace that are up (the
// kernel skips the others), is bounded in time (Timeout) and in size
// (MaxReplies), and a reply that does not parse is an error wrapping
// kernfs.ErrMalformed that names the attribute.
//
// Where qstats-get has nothing for an interface, EthtoolQueueStats reads
// the driver's per-queue packet counters from ethtool -S (ETH_SS_STATS),
// by one naming rule per driver family (ethtool_rules.go). The package
// only reads.
//
// The numbers (commands, attributes, enums) are those of
// include/uapi/linux/netdev.h, generated from
// Documentation/netlink/specs/netdev.yaml; they never change once
// released.
package netdev
