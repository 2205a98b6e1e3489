package watch

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/numairqd/numairqd/pkg/kernfs"
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

// nlConn is a non-blocking netlink socket on the runtime's netpoller,
// so that Close and deadlines interrupt a pending receive.
type nlConn struct {
	name   string
	f      *os.File
	rc     syscall.RawConn
	buf    []byte
	oob    []byte
	closed atomic.Bool
}

func openNetlink(name string, proto int, groups uint32, rcvbuf, bufSize int) (*nlConn, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, proto)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, os.NewSyscallError("socket", err))
	}
	fail := func(op string, err error) (*nlConn, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", name, os.NewSyscallError(op, err))
	}
	if rcvbuf <= 0 {
		rcvbuf = DefaultReceiveBuffer
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvbuf); err != nil {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, rcvbuf); err != nil {
			return fail("setsockopt SO_RCVBUF", err)
		}
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		return fail("setsockopt SO_PASSCRED", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: groups}); err != nil {
		return fail("bind", err)
	}
	f := os.NewFile(uintptr(fd), name)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &nlConn{
		name: name,
		f:    f,
		rc:   rc,
		buf:  make([]byte, bufSize),
		oob:  make([]byte, unix.CmsgSpace(unix.SizeofUcred)*2),
	}, nil
}

// recv returns the next datagram (valid until the next call), its
// sender's port and its credentials (nil when none came with it).
func (c *nlConn) recv() (b []byte, port uint32, cred *unix.Ucred, err error) {
	var (
		n, oobn, flags int
		from           unix.Sockaddr
		rerr           error
	)
	err = c.rc.Read(func(fd uintptr) bool {
		for {
			n, oobn, flags, from, rerr = unix.Recvmsg(int(fd), c.buf, c.oob, 0)
			if rerr != unix.EINTR {
				return rerr != unix.EAGAIN
			}
		}
	})
	if err != nil {
		if c.closed.Load() {
			return nil, 0, nil, fmt.Errorf("%s: %w", c.name, os.ErrClosed)
		}
		return nil, 0, nil, fmt.Errorf("%s: %w", c.name, err)
	}
	switch {
	case rerr == unix.ENOBUFS:
		return nil, 0, nil, fmt.Errorf("%s: %w", c.name, ErrOverflow)
	case rerr != nil:
		return nil, 0, nil, fmt.Errorf("%s: %w", c.name, os.NewSyscallError("recvmsg", rerr))
	}
	sa, ok := from.(*unix.SockaddrNetlink)
	if !ok {
		return nil, 0, nil, fmt.Errorf("%s: %w: sender address %T", c.name, ErrNotKernel, from)
	}
	if flags&unix.MSG_TRUNC != 0 {
		if err := checkSender(sa.Pid, nil); err != nil {
			return nil, sa.Pid, nil, fmt.Errorf("%s: truncated message: %w", c.name, err)
		}
		return nil, sa.Pid, nil, fmt.Errorf("%s: %w: more than %d bytes from port %d", c.name, ErrTruncated, len(c.buf), sa.Pid)
	}
	if oobn > 0 {
		cred, err = parseCred(c.oob[:oobn])
		if err != nil {
			return nil, sa.Pid, nil, fmt.Errorf("%s: %w: unreadable credentials: %v", c.name, ErrNotKernel, err)
		}
	}
	return c.buf[:n], sa.Pid, cred, nil
}

// resolveFamily asks nlctrl for the generic netlink family name and
// waits up to timeout for the answer. Only the kernel's (port 0) answer
// to this request counts; any other message is skipped. It must run
// before the socket joins a group, so that nothing else is queued.
func (c *nlConn) resolveFamily(name string, timeout time.Duration) (genlFamily, error) {
	const seq = 1
	if err := c.f.SetDeadline(time.Now().Add(timeout)); err != nil {
		return genlFamily{}, fmt.Errorf("%s: %w", c.name, err)
	}
	defer c.f.SetDeadline(time.Time{})
	if err := c.send(getFamilyRequest(name, seq)); err != nil {
		return genlFamily{}, fmt.Errorf("%s: family %q: %w", c.name, name, err)
	}
	for {
		b, port, _, err := c.recv()
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			return genlFamily{}, fmt.Errorf("%s: family %q: no answer from nlctrl within %v: %w", c.name, name, timeout, err)
		case err != nil:
			return genlFamily{}, fmt.Errorf("family %q: %w", name, err)
		case checkSender(port, nil) != nil:
			continue
		}
		f, ok, err := parseFamilyReply(b, seq)
		switch {
		case err != nil:
			return genlFamily{}, fmt.Errorf("%s: family %q: %w", c.name, name, err)
		case !ok:
			continue
		case f.Name != "" && f.Name != name:
			return genlFamily{}, fmt.Errorf("%s: family %q: %w: nlctrl answered for %q", c.name, name, kernfs.ErrMalformed, f.Name)
		}
		return f, nil
	}
}

// send sends b to the kernel (port 0).
func (c *nlConn) send(b []byte) error {
	var serr error
	err := c.rc.Write(func(fd uintptr) bool {
		serr = unix.Sendto(int(fd), b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
		return serr != unix.EAGAIN
	})
	if err != nil {
		return err
	}
	if serr != nil {
		return os.NewSyscallError("sendto", serr)
	}
	return nil
}

// join adds the socket to multicast group (NETLINK_ADD_MEMBERSHIP).
func (c *nlConn) join(group uint32) error {
	var serr error
	if err := c.rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_NETLINK, unix.NETLINK_ADD_MEMBERSHIP, int(group))
	}); err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	if serr != nil {
		return fmt.Errorf("%s: group %d: %w", c.name, group, os.NewSyscallError("setsockopt NETLINK_ADD_MEMBERSHIP", serr))
	}
	return nil
}

// parseCred returns the SCM_CREDENTIALS in oob, nil if there are none.
func parseCred(oob []byte) (*unix.Ucred, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	for i := range msgs {
		if msgs[i].Header.Level == unix.SOL_SOCKET && msgs[i].Header.Type == unix.SCM_CREDENTIALS {
			return unix.ParseUnixCredentials(&msgs[i])
		}
	}
	return nil, nil
}

func (c *nlConn) close() error {
	if c.closed.Swap(true) {
		return nil
	}
	err := c.f.Close()
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}
