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

// Receive returns the next datagram decoded. Errors are nl's, or
// kernfs.ErrMalformed or ErrLibudev for one that does not decode.
func (c *Conn[T]) Receive() (T, error) {
	b, err := c.Conn.Receive()
	if err != nil {
		var zero T
		return zero, err
	}
	return c.decode(b)
}

// ListenUevents opens a uevent socket bound to the kernel's group 1
// with rcvbuf bytes of buffer (0: nl.DefaultReceiveBuffer).
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
	// RTM_NEWLINK carries statistics and a nest per VF: give it room.
	c, err := nl.Listen("rtnetlink", unix.NETLINK_ROUTE, unix.RTMGRP_LINK, rcvbuf, 64<<10)
	if err != nil {
		return nil, err
	}
	return &LinkConn{c, ParseLinkMessages}, nil
}

// ListenEthtool joins the ethtool "monitor" group and counts
// ETHTOOL_MSG_CHANNELS_NTF: after ethtool -L drivers request vectors or
// rewrite affinities, which no uevent announces.
func ListenEthtool(rcvbuf int) (*EthtoolConn, error) {
	c, err := nl.ListenGeneric(unix.ETHTOOL_GENL_NAME, unix.ETHTOOL_MCGRP_MONITOR_NAME, rcvbuf, 64<<10)
	if err != nil {
		return nil, err
	}
	return &EthtoolConn{c, func(b []byte) (int, error) { return countGenl(b, c.Family, unix.ETHTOOL_MSG_CHANNELS_NTF) }}, nil
}

// ListenNetdev joins the netdev "mgmt" group (6.3+) and counts
// DEV_ADD_NTF, _DEL_NTF and _CHANGE_NTF (2, 3, 4): devices bring or free
// queue IRQs, and change XDP features as they reconfigure queues.
func ListenNetdev(rcvbuf int) (*NetdevConn, error) {
	c, err := nl.ListenGeneric("netdev", "mgmt", rcvbuf, 8192)
	if err != nil {
		return nil, err
	}
	return &NetdevConn{c, func(b []byte) (int, error) { return countGenl(b, c.Family, 2, 3, 4) }}, nil
}

// countGenl counts b's messages of family with a command in cmds.
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
