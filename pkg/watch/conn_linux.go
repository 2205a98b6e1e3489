package watch

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
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
