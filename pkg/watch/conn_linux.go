package watch

import (
	"fmt"
	"slices"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/nl"
	"golang.org/x/sys/unix"
)

// Conn receives one kind of netlink notification, decoded as T: the
// socket and its trust checks are pkg/nl's, the decoding this package's.
type Conn[T any] struct {
	*nl.Conn
	decode func(b []byte) (T, error)
}

type (
	UeventConn  = Conn[Uevent]      // kernel uevents (NETLINK_KOBJECT_UEVENT group 1)
	LinkConn    = Conn[[]LinkEvent] // rtnetlink link notifications (RTNLGRP_LINK)
	EthtoolConn = Conn[int]         // the ethtool "monitor" group: channel changes
	NetdevConn  = Conn[int]         // the netdev "mgmt" group: device notifications
)

// Receive waits for the next datagram and returns it decoded. Errors are
// nl.Conn.Receive's, and kernfs.ErrMalformed or ErrLibudev for a
// datagram that does not decode; the caller should keep receiving after
// all but os.ErrDeadlineExceeded and os.ErrClosed.
func (c *Conn[T]) Receive() (T, error) {
	b, err := c.Conn.Receive()
	if err != nil {
		var zero T
		return zero, err
	}
	return c.decode(b)
}

// ListenUevents opens a uevent socket bound to the kernel's group 1
// (group 2 is udev's rebroadcast) with a receive buffer of rcvbuf bytes
// (nl.DefaultReceiveBuffer when 0). It needs no privilege.
func ListenUevents(rcvbuf int) (*UeventConn, error) {
	c, err := nl.Listen("uevent", unix.NETLINK_KOBJECT_UEVENT, 1, rcvbuf, 8192)
	if err != nil {
		return nil, err
	}
	c.CheckUID = true
	return &UeventConn{c, ParseUevent}, nil
}

// ListenLinks opens a NETLINK_ROUTE socket bound to RTMGRP_LINK.
func ListenLinks(rcvbuf int) (*LinkConn, error) {
	// RTM_NEWLINK carries every statistic and, for a PF with VFs, one
	// nest per VF: give it room. MSG_TRUNC still catches the rest.
	c, err := nl.Listen("rtnetlink", unix.NETLINK_ROUTE, unix.RTMGRP_LINK, rcvbuf, 64<<10)
	if err != nil {
		return nil, err
	}
	return &LinkConn{c, ParseLinkMessages}, nil
}

// ListenEthtool joins the ethtool family's "monitor" group. Only
// ETHTOOL_MSG_CHANNELS_NTF counts: after ethtool -L a driver frees and
// requests vectors (mlx5, ice, MANA) or rewrites their affinities
// (virtnet_set_affinity), which no uevent announces. The other
// notifications (rings, coalescing, features, ...) change the queues'
// settings, not their number; a driver that restarts its queues for one
// requests the same vectors, and the kernel keeps a user affinity across
// that. A kernel without the family gives an error wrapping
// nl.ErrNoFamily.
func ListenEthtool(rcvbuf int) (*EthtoolConn, error) {
	// The monitor also carries link modes and features, larger than a
	// channels notification: give them room.
	c, err := nl.ListenGeneric(unix.ETHTOOL_GENL_NAME, unix.ETHTOOL_MCGRP_MONITOR_NAME, rcvbuf, 64<<10)
	if err != nil {
		return nil, err
	}
	return &EthtoolConn{c, func(b []byte) (int, error) { return countGenl(b, c.Family, unix.ETHTOOL_MSG_CHANNELS_NTF) }}, nil
}

// ListenNetdev joins the netdev family's "mgmt" group (Linux 6.3+): a
// device registered, unregistered, or its XDP features changed
// (NETDEV_CMD_DEV_ADD_NTF, _DEL_NTF, _CHANGE_NTF: 2, 3, 4). A device
// that comes or goes may bring or free queue IRQs, and drivers change
// their XDP features as they reconfigure their queues.
func ListenNetdev(rcvbuf int) (*NetdevConn, error) {
	c, err := nl.ListenGeneric("netdev", "mgmt", rcvbuf, 8192)
	if err != nil {
		return nil, err
	}
	return &NetdevConn{c, func(b []byte) (int, error) { return countGenl(b, c.Family, 2, 3, 4) }}, nil
}

// countGenl counts the messages of datagram b of generic netlink family
// whose command is one of cmds.
func countGenl(b []byte, family uint16, cmds ...uint8) (int, error) {
	msgs, err := nl.Messages(b)
	n := 0
	for _, m := range msgs {
		switch {
		case m.Header.Type != family:
		case len(m.Data) < 4:
			return 0, fmt.Errorf("%w: genlmsghdr of %d bytes, want 4", kernfs.ErrMalformed, len(m.Data))
		case slices.Contains(cmds, m.Data[0]):
			n++
		}
	}
	return n, err
}
