package watch

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultReceiveBuffer is the socket receive buffer asked for when the
// caller passes 0: enough for a burst of thousands of uevents (a memory
// hot-add, a CPU SMT switch) before the kernel reports ENOBUFS.
const DefaultReceiveBuffer = 8 << 20

// ueventGroup is the kernel's uevent multicast group; group 2 is udev's.
const ueventGroup = 1

// AcceptUevent decides whether a message received on the uevent socket
// is trusted, as systemd's device-monitor.c does, and parses it: the
// sender's port must be 0 (userspace can send to group 1 too) and, when
// credentials came with it, their uid 0. An untrusted message gives an
// error wrapping ErrNotKernel; one that does not parse, ParseUevent's.
func AcceptUevent(senderPort uint32, cred *unix.Ucred, payload []byte) (Uevent, error) {
	if err := checkSender(senderPort, cred); err != nil {
		return Uevent{}, fmt.Errorf("uevent %s: %w", quote(payload), err)
	}
	return ParseUevent(payload)
}

// AcceptLink is AcceptUevent for rtnetlink, without the credentials:
// the nlmsg_pid inside a notification names the process that asked for
// the change, so only the sender's port tells the kernel apart.
func AcceptLink(senderPort uint32, payload []byte) ([]LinkEvent, error) {
	if err := checkSender(senderPort, nil); err != nil {
		return nil, fmt.Errorf("rtnetlink message: %w", err)
	}
	return ParseLinkMessages(payload)
}

// AcceptEthtool is AcceptLink for the ethtool monitor group, whose
// messages have type family; inside a user namespace the kernel's uid
// may show as the overflow uid, so credentials are not checked either.
func AcceptEthtool(senderPort uint32, family uint16, payload []byte) ([]ChannelsEvent, error) {
	if err := checkSender(senderPort, nil); err != nil {
		return nil, fmt.Errorf("ethtool message: %w", err)
	}
	return ParseEthtoolMessages(payload, family)
}

// AcceptNetdev is AcceptEthtool for the netdev family's "mgmt" group.
func AcceptNetdev(senderPort uint32, family uint16, payload []byte) ([]DevEvent, error) {
	if err := checkSender(senderPort, nil); err != nil {
		return nil, fmt.Errorf("netdev message: %w", err)
	}
	return ParseNetdevMessages(payload, family)
}

func checkSender(port uint32, cred *unix.Ucred) error {
	if port != 0 {
		return fmt.Errorf("%w: sender port %d", ErrNotKernel, port)
	}
	if cred != nil && cred.Uid != 0 {
		return fmt.Errorf("%w: sender uid %d", ErrNotKernel, cred.Uid)
	}
	return nil
}

// Conn receives one kind of netlink notification, as T. Receive must not
// be called concurrently; Close may be called from any goroutine and
// unblocks a pending Receive.
type Conn[T any] struct {
	c      *nlConn
	accept func(port uint32, cred *unix.Ucred, b []byte) (T, error)
	family uint16 // generic netlink: the nlmsg_type of the family's messages
	group  uint32 // generic netlink: the joined group's id
}

type (
	UeventConn  = Conn[Uevent]          // kernel uevents (NETLINK_KOBJECT_UEVENT group 1)
	LinkConn    = Conn[[]LinkEvent]     // rtnetlink link notifications (RTNLGRP_LINK)
	EthtoolConn = Conn[[]ChannelsEvent] // the ethtool family's monitor notifications
	NetdevConn  = Conn[[]DevEvent]      // the netdev family's mgmt notifications
)

// ListenUevents opens a uevent socket bound to the kernel's group 1
// with a receive buffer of rcvbuf bytes (DefaultReceiveBuffer when 0;
// capped by rmem_max without CAP_NET_ADMIN). It needs no privilege.
func ListenUevents(rcvbuf int) (*UeventConn, error) {
	c, err := openNetlink("uevent", unix.NETLINK_KOBJECT_UEVENT, ueventGroup, rcvbuf, 8192)
	if err != nil {
		return nil, err
	}
	return &UeventConn{c: c, accept: AcceptUevent}, nil
}

// ListenLinks opens a NETLINK_ROUTE socket bound to RTMGRP_LINK, with a
// receive buffer of rcvbuf bytes (DefaultReceiveBuffer when 0).
func ListenLinks(rcvbuf int) (*LinkConn, error) {
	// RTM_NEWLINK carries every statistic and, for a PF with VFs, one
	// nest per VF: give it room. MSG_TRUNC still catches the rest.
	c, err := openNetlink("rtnetlink", unix.NETLINK_ROUTE, unix.RTMGRP_LINK, rcvbuf, 64<<10)
	if err != nil {
		return nil, err
	}
	accept := func(port uint32, _ *unix.Ucred, b []byte) ([]LinkEvent, error) { return AcceptLink(port, b) }
	return &LinkConn{c: c, accept: accept}, nil
}

// familyTimeout bounds the nlctrl request that resolves a generic
// netlink family: the kernel answers at once, and a stalled host gives
// up the source rather than hold the daemon's start.
const familyTimeout = 5 * time.Second

// ListenEthtool resolves the generic netlink family "ethtool" and its
// "monitor" group through nlctrl, then joins the group. A kernel
// without them gives an error wrapping ErrNoFamily.
func ListenEthtool(rcvbuf int) (*EthtoolConn, error) {
	// Notifications are sized to their content; the monitor also carries
	// link modes and features, larger than a channels one, and one past
	// the buffer is MSG_TRUNC and a full rescan: give them room.
	c, f, group, err := listenGeneric("ethtool", unix.ETHTOOL_GENL_NAME, unix.ETHTOOL_MCGRP_MONITOR_NAME, rcvbuf, 64<<10)
	if err != nil {
		return nil, err
	}
	accept := func(port uint32, _ *unix.Ucred, b []byte) ([]ChannelsEvent, error) {
		return AcceptEthtool(port, f.ID, b)
	}
	return &EthtoolConn{c: c, accept: accept, family: f.ID, group: group}, nil
}

// ListenNetdev is ListenEthtool for the netdev family's "mgmt" group
// (Linux 6.3+): device registered, unregistered, XDP features changed.
func ListenNetdev(rcvbuf int) (*NetdevConn, error) {
	// A dev-get reply is a few u32 and u64 attributes.
	c, f, group, err := listenGeneric("netdev", netdevFamily, netdevGroupMgmt, rcvbuf, 8192)
	if err != nil {
		return nil, err
	}
	accept := func(port uint32, _ *unix.Ucred, b []byte) ([]DevEvent, error) {
		return AcceptNetdev(port, f.ID, b)
	}
	return &NetdevConn{c: c, accept: accept, family: f.ID, group: group}, nil
}

// listenGeneric opens a generic netlink socket named name, resolves
// family and its multicast group through nlctrl, then joins the group
// with NETLINK_ADD_MEMBERSHIP: generic netlink group ids are given out
// at run time and may not fit bind's 32-bit mask. A kernel without the
// family or the group gives an error wrapping ErrNoFamily.
func listenGeneric(name, family, group string, rcvbuf, bufSize int) (*nlConn, genlFamily, uint32, error) {
	c, err := openNetlink(name, unix.NETLINK_GENERIC, 0, rcvbuf, bufSize)
	if err != nil {
		return nil, genlFamily{}, 0, err
	}
	f, err := c.resolveFamily(family, familyTimeout)
	if err != nil {
		c.close()
		return nil, genlFamily{}, 0, err
	}
	id, ok := f.Groups[group]
	if !ok {
		c.close()
		return nil, genlFamily{}, 0, fmt.Errorf("%s: %w: family %q (id %d) has no group %q", name, ErrNoFamily, family, f.ID, group)
	}
	if err := c.join(id); err != nil {
		c.close()
		return nil, genlFamily{}, 0, err
	}
	return c, f, id, nil
}

// Receive waits for the next datagram and returns it parsed. Errors to
// tell apart with errors.Is: ErrOverflow (messages were lost: rescan),
// ErrNotKernel (dropped spoof), kernfs.ErrMalformed, ErrLibudev and
// ErrTruncated (dropped message), os.ErrDeadlineExceeded, and
// os.ErrClosed after Close. The caller should keep receiving after all
// but the last two.
func (c *Conn[T]) Receive() (T, error) {
	b, port, cred, err := c.c.recv()
	if err != nil {
		var zero T
		return zero, err
	}
	return c.accept(port, cred, b)
}

// SetReadDeadline sets the deadline for Receive, as os.File does.
func (c *Conn[T]) SetReadDeadline(t time.Time) error { return c.c.f.SetReadDeadline(t) }

// Close closes the socket; a pending Receive returns os.ErrClosed.
func (c *Conn[T]) Close() error { return c.c.close() }
