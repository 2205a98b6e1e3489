// Package netdev reads the kernel's "netdev" generic netlink family:
// which NAPI serves each queue (queue-get, 6.8+), which IRQ and kthread
// each NAPI has (napi-get, 6.8+), and each queue's packets and bytes
// (qstats-get, 6.9+); and, where qstats-get has nothing, the driver's
// per-queue counters from ethtool -S. An older kernel gives an error for
// which Unavailable is true. Dumps cover the up interfaces of the
// caller's namespace, are bounded in time and size, and a bad reply
// wraps kernfs.ErrMalformed. The package only reads.
package netdev
