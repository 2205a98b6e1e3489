// Package netdev reads each device queue's packet and byte counters, the load placement weighs:
// netdev netlink qstats where the kernel has them (6.9+), else the driver's names in ethtool -S.
package netdev
