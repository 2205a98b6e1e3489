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
// is trusted, and parses it. It mirrors the checks of systemd's
// device-monitor.c: the sender's netlink port must be 0 (the kernel;
// userspace can send to group 1 too) and, when credentials came with
// the message (SO_PASSCRED), their uid must be 0. An untrusted message
// gives an error wrapping ErrNotKernel; a trusted one that does not
// parse, the error of ParseUevent.
func AcceptUevent(senderPort uint32, cred *unix.Ucred, payload []byte) (Uevent, error) {
	if err := checkSender(senderPort, cred); err != nil {
		return Uevent{}, fmt.Errorf("uevent %s: %w", quote(payload), err)
	}
	return ParseUevent(payload)
}

// AcceptLink is AcceptUevent for rtnetlink: the sender's netlink port
// must be 0, then the datagram is parsed by ParseLinkMessages. (The
// nlmsg_pid inside a notification names the process that asked for the
// change, so it is not checked.)
func AcceptLink(senderPort uint32, payload []byte) ([]LinkEvent, error) {
	if err := checkSender(senderPort, nil); err != nil {
		return nil, fmt.Errorf("rtnetlink message: %w", err)
	}
	return ParseLinkMessages(payload)
}

// AcceptEthtool is AcceptLink for the ethtool monitor group: the
// sender's netlink port must be 0, then the datagram is parsed by
// ParseEthtoolMessages with family, the ethtool family's id.
// Credentials are not checked, as for rtnetlink: only the port tells
// the kernel apart, and inside a user namespace the kernel's uid may
// show as the overflow uid.
func AcceptEthtool(senderPort uint32, family uint16, payload []byte) ([]ChannelsEvent, error) {
	if err := checkSender(senderPort, nil); err != nil {
		return nil, fmt.Errorf("ethtool message: %w", err)
	}
	return ParseEthtoolMessages(payload, family)
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

// UeventConn receives kernel uevents (NETLINK_KOBJECT_UEVENT group 1).
// Receive must not be called concurrently; Close may be called from any
// goroutine and unblocks a pending Receive.
type UeventConn struct{ c *nlConn }

// ListenUevents opens a uevent socket bound to the kernel's group 1
// with SO_PASSCRED and a receive buffer of rcvbuf bytes
// (DefaultReceiveBuffer when 0; SO_RCVBUFFORCE, falling back to the
// rmem_max-capped SO_RCVBUF without CAP_NET_ADMIN). Receiving needs no
// privilege.
func ListenUevents(rcvbuf int) (*UeventConn, error) {
	c, err := openNetlink("uevent", unix.NETLINK_KOBJECT_UEVENT, ueventGroup, rcvbuf, 8192)
	if err != nil {
		return nil, err
	}
	return &UeventConn{c}, nil
}

// Receive waits for the next message and returns it parsed. Errors to
// tell apart with errors.Is: ErrOverflow (messages were lost: rescan),
// ErrNotKernel (dropped spoof), kernfs.ErrMalformed, ErrLibudev and
// ErrTruncated (dropped message), os.ErrDeadlineExceeded, and
// os.ErrClosed after Close. The caller should keep receiving after all
// but the last two.
func (c *UeventConn) Receive() (Uevent, error) {
	b, port, cred, err := c.c.recv()
	if err != nil {
		return Uevent{}, err
	}
	return AcceptUevent(port, cred, b)
}

// SetReadDeadline sets the deadline for Receive, as os.File does.
func (c *UeventConn) SetReadDeadline(t time.Time) error { return c.c.f.SetReadDeadline(t) }

// Close closes the socket; a pending Receive returns os.ErrClosed.
func (c *UeventConn) Close() error { return c.c.close() }

// LinkConn receives rtnetlink link notifications (RTNLGRP_LINK). Like
// UeventConn, Receive is for one goroutine and Close for any.
type LinkConn struct{ c *nlConn }

// ListenLinks opens a NETLINK_ROUTE socket bound to RTMGRP_LINK, with a
// receive buffer of rcvbuf bytes (DefaultReceiveBuffer when 0).
func ListenLinks(rcvbuf int) (*LinkConn, error) {
	// RTM_NEWLINK carries every statistic and, for a PF with VFs, one
	// nest per VF: give it room. MSG_TRUNC still catches the rest.
	c, err := openNetlink("rtnetlink", unix.NETLINK_ROUTE, unix.RTMGRP_LINK, rcvbuf, 64<<10)
	if err != nil {
		return nil, err
	}
	return &LinkConn{c}, nil
}

// Receive waits for the next datagram and returns its link events
// (possibly none). Errors are those of UeventConn.Receive.
func (c *LinkConn) Receive() ([]LinkEvent, error) {
	b, port, _, err := c.c.recv()
	if err != nil {
		return nil, err
	}
	return AcceptLink(port, b)
}

// SetReadDeadline sets the deadline for Receive, as os.File does.
func (c *LinkConn) SetReadDeadline(t time.Time) error { return c.c.f.SetReadDeadline(t) }

// Close closes the socket; a pending Receive returns os.ErrClosed.
func (c *LinkConn) Close() error { return c.c.close() }

// familyTimeout bounds the nlctrl request that resolves the ethtool
// family when the source opens. The kernel answers at once; only a
// stalled host makes it wait, and then the source is given up rather
// than the daemon's start held.
const familyTimeout = 5 * time.Second

// EthtoolConn receives the ethtool generic netlink family's monitor
// notifications. Like UeventConn, Receive is for one goroutine and
// Close for any.
type EthtoolConn struct {
	c      *nlConn
	family uint16 // the nlmsg_type of the family's messages
	group  uint32 // the monitor group's id
}

// ListenEthtool resolves the generic netlink family "ethtool" and its
// "monitor" multicast group through nlctrl (CTRL_CMD_GETFAMILY, given up
// after familyTimeout) on a NETLINK_GENERIC socket with a receive buffer
// of rcvbuf bytes (DefaultReceiveBuffer when 0), then joins the group
// with NETLINK_ADD_MEMBERSHIP: generic netlink group ids are given out
// at run time and may not fit bind's 32-bit mask. A kernel without the
// family or the group (before 5.6, or built without
// CONFIG_ETHTOOL_NETLINK) gives an error wrapping ErrNoFamily.
// Receiving needs no privilege.
func ListenEthtool(rcvbuf int) (*EthtoolConn, error) {
	// Notifications are sized to their content (ethnl_default_notify);
	// the monitor also carries link modes and features, larger than a
	// channels one. A datagram past the buffer is MSG_TRUNC: lost
	// events and a full rescan, so give it room.
	c, err := openNetlink("ethtool", unix.NETLINK_GENERIC, 0, rcvbuf, 64<<10)
	if err != nil {
		return nil, err
	}
	f, err := c.resolveFamily(unix.ETHTOOL_GENL_NAME, familyTimeout)
	if err != nil {
		c.close()
		return nil, err
	}
	group, ok := f.Groups[unix.ETHTOOL_MCGRP_MONITOR_NAME]
	if !ok {
		c.close()
		return nil, fmt.Errorf("ethtool: %w: family %q (id %d) has no group %q",
			ErrNoFamily, unix.ETHTOOL_GENL_NAME, f.ID, unix.ETHTOOL_MCGRP_MONITOR_NAME)
	}
	if err := c.join(group); err != nil {
		c.close()
		return nil, err
	}
	return &EthtoolConn{c: c, family: f.ID, group: group}, nil
}

// Receive waits for the next datagram and returns its channel change
// events (possibly none). Errors are those of UeventConn.Receive.
func (c *EthtoolConn) Receive() ([]ChannelsEvent, error) {
	b, port, _, err := c.c.recv()
	if err != nil {
		return nil, err
	}
	return AcceptEthtool(port, c.family, b)
}

// SetReadDeadline sets the deadline for Receive, as os.File does.
func (c *EthtoolConn) SetReadDeadline(t time.Time) error { return c.c.f.SetReadDeadline(t) }

// Close closes the socket; a pending Receive returns os.ErrClosed.
func (c *EthtoolConn) Close() error { return c.c.close() }
