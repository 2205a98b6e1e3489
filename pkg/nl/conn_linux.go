// Package nl owns the daemon's netlink sockets: pkg/watch's listeners
// and pkg/netdev's dumps, over mdlayher/netlink and genetlink. It adds
// each datagram's sender check, so that only the kernel is trusted, and
// the overflow and truncation errors that call for a rescan.
package nl

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

var (
	// ErrNotKernel marks a message to drop: its sender is not the kernel.
	ErrNotKernel = errors.New("sender is not the kernel")
	// ErrOverflow: the receive queue overflowed (ENOBUFS); rescan.
	ErrOverflow = errors.New("netlink receive queue overflow, events lost")
	// ErrTruncated: a message larger than the receive buffer was lost.
	ErrTruncated = errors.New("message truncated")
	// ErrNoFamily: the kernel has no such generic netlink family or group.
	ErrNoFamily = errors.New("no such generic netlink family or group")
)

// DefaultReceiveBuffer is the receive buffer for rcvbuf 0.
const DefaultReceiveBuffer = 8 << 20

// familyTimeout bounds the nlctrl request that resolves a family.
const familyTimeout = 5 * time.Second

// Conn receives the datagrams of one netlink socket. Receive must not
// be called concurrently; Close may be, and unblocks it.
type Conn struct {
	// Family is the nlmsg_type of a generic netlink family's messages.
	Family uint16
	// CheckUID also refuses a uid other than 0: for uevents only, as in a
	// user namespace other messages may carry the overflow uid.
	CheckUID bool

	name     string
	c        *netlink.Conn
	rc       syscall.RawConn
	buf, oob []byte
	closed   atomic.Bool
}

// Listen opens a netlink socket bound to groups; name prefixes errors.
func Listen(name string, proto int, groups uint32, rcvbuf, size int) (*Conn, error) {
	c, err := netlink.Dial(proto, &netlink.Config{Groups: groups})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if rcvbuf <= 0 {
		rcvbuf = DefaultReceiveBuffer
	}
	var serr error
	rc, err := c.SyscallConn()
	if err == nil {
		err = c.SetReadBuffer(rcvbuf)
	}
	if err == nil {
		err = rc.Control(func(fd uintptr) {
			serr = os.NewSyscallError("setsockopt SO_PASSCRED", unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PASSCRED, 1))
		})
	}
	if err = errors.Join(err, serr); err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Conn{name: name, c: c, rc: rc, buf: make([]byte, size), oob: make([]byte, unix.CmsgSpace(unix.SizeofUcred)*2)}, nil
}

// ListenGeneric opens a generic netlink socket in family's group.
func ListenGeneric(family, group string, rcvbuf, size int) (*Conn, error) {
	c, err := Listen(family, unix.NETLINK_GENERIC, 0, rcvbuf, size)
	if err != nil {
		return nil, err
	}
	f, err := resolve(genetlink.NewConn(c.c), family)
	if err == nil {
		err = fmt.Errorf("%w: family %q (id %d) has no group %q", ErrNoFamily, family, f.ID, group)
		for _, g := range f.Groups {
			if g.Name == group {
				err = c.c.JoinGroup(g.ID)
			}
		}
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: %w", family, err)
	}
	c.Family = f.ID
	return c, nil
}

// resolve asks nlctrl for family, waiting up to familyTimeout.
func resolve(c *genetlink.Conn, family string) (genetlink.Family, error) {
	if err := c.SetDeadline(time.Now().Add(familyTimeout)); err != nil {
		return genetlink.Family{}, err
	}
	defer c.SetDeadline(time.Time{})
	f, err := c.GetFamily(family)
	if errors.Is(err, unix.ENOENT) {
		return f, fmt.Errorf("%w: family %q: %w", ErrNoFamily, family, err)
	}
	return f, err
}

// Receive returns the next datagram, valid until the next call. Keep
// receiving after errors but os.ErrDeadlineExceeded and os.ErrClosed.
func (c *Conn) Receive() ([]byte, error) {
	var (
		n, oobn, flags int
		from           unix.Sockaddr
		rerr           error
	)
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			n, oobn, flags, from, rerr = unix.Recvmsg(int(fd), c.buf, c.oob, 0)
			if rerr != unix.EINTR {
				return rerr != unix.EAGAIN
			}
		}
	})
	switch {
	case err != nil && c.closed.Load():
		return nil, fmt.Errorf("%s: %w", c.name, os.ErrClosed)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", c.name, err)
	case rerr == unix.ENOBUFS:
		return nil, fmt.Errorf("%s: %w", c.name, ErrOverflow)
	case rerr != nil:
		return nil, fmt.Errorf("%s: %w", c.name, os.NewSyscallError("recvmsg", rerr))
	}
	sa, ok := from.(*unix.SockaddrNetlink)
	if !ok {
		return nil, fmt.Errorf("%s: %w: sender address %T", c.name, ErrNotKernel, from)
	}
	var cred *unix.Ucred
	if c.CheckUID {
		if cred, err = parseCred(c.oob[:oobn]); err != nil {
			return nil, fmt.Errorf("%s: %w: unreadable credentials: %v", c.name, ErrNotKernel, err)
		}
	}
	if err := CheckSender(sa.Pid, cred); err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	if flags&unix.MSG_TRUNC != 0 {
		return nil, fmt.Errorf("%s: %w: more than %d bytes", c.name, ErrTruncated, len(c.buf))
	}
	return c.buf[:n], nil
}

// CheckSender returns ErrNotKernel unless port and uid (if any) are 0.
func CheckSender(port uint32, cred *unix.Ucred) error {
	if port != 0 {
		return fmt.Errorf("%w: sender port %d", ErrNotKernel, port)
	}
	if cred != nil && cred.Uid != 0 {
		return fmt.Errorf("%w: sender uid %d", ErrNotKernel, cred.Uid)
	}
	return nil
}

// SetReadDeadline sets the deadline for Receive, as os.File does.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.c.SetReadDeadline(t) }

// Close closes the socket; a pending Receive returns os.ErrClosed.
func (c *Conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	return c.c.Close()
}

// parseCred returns the SCM_CREDENTIALS in oob, nil if there are none.
func parseCred(oob []byte) (*unix.Ucred, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	for i := range msgs {
		if msgs[i].Header.Level == unix.SOL_SOCKET && msgs[i].Header.Type == unix.SCM_CREDENTIALS {
			return unix.ParseUnixCredentials(&msgs[i])
		}
	}
	return nil, err
}
