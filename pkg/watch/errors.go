//go:build linux

package watch

import "errors"

var (
	// ErrLibudev marks a udev (group 2, "libudev\0" header) message where
	// a kernel uevent was expected.
	ErrLibudev = errors.New("udev rebroadcast, not a kernel uevent")
	// ErrNotKernel marks a message to drop: its sender is not the kernel.
	ErrNotKernel = errors.New("sender is not the kernel")
	// ErrOverflow reports that the socket's receive queue overflowed
	// (ENOBUFS) and messages were lost: rescan everything.
	ErrOverflow = errors.New("netlink receive queue overflow, events lost")
	// ErrTruncated reports a message larger than the receive buffer
	// (MSG_TRUNC); its content is lost.
	ErrTruncated = errors.New("message truncated")
	// ErrNoFamily reports that the kernel has no such generic netlink
	// family or group (ethtool before 5.6, or without
	// CONFIG_ETHTOOL_NETLINK; netdev before 6.3).
	ErrNoFamily = errors.New("no such generic netlink family or group")
)
