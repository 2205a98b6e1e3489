package watch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"golang.org/x/sys/unix"
)

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
// waits up to timeout for the kernel's answer. It must run before the
// socket joins a group, so that nothing else is queued.
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

// nlHeader is the part of struct nlmsghdr the parsers look at.
type nlHeader struct {
	Type uint16
	Seq  uint32
}

// walkMessages calls fn with the header and payload of each nlmsghdr
// framed message of datagram b. A length below the header or past the
// datagram is an error wrapping kernfs.ErrMalformed; what fn returns is
// prefixed with what and the message's offset.
func walkMessages(b []byte, what string, fn func(h nlHeader, payload []byte) error) error {
	for off := 0; len(b)-off >= unix.SizeofNlMsghdr; {
		m := b[off:]
		n := int(binary.NativeEndian.Uint32(m[0:4]))
		if n < unix.SizeofNlMsghdr || n > len(m) {
			return fmt.Errorf("%s message at offset %d: %w: length %d outside [%d, %d]",
				what, off, kernfs.ErrMalformed, n, unix.SizeofNlMsghdr, len(m))
		}
		h := nlHeader{Type: binary.NativeEndian.Uint16(m[4:6]), Seq: binary.NativeEndian.Uint32(m[8:12])}
		if err := fn(h, m[unix.SizeofNlMsghdr:n]); err != nil {
			return fmt.Errorf("%s message at offset %d: %w", what, off, err)
		}
		off += nlAlign(n)
	}
	return nil
}

// walkAttrs calls fn with the type (flags stripped) and payload of each
// netlink attribute in b; a length out of bounds wraps
// kernfs.ErrMalformed.
func walkAttrs(b []byte, fn func(typ uint16, v []byte) error) error {
	for off := 0; len(b)-off >= unix.SizeofNlAttr; {
		a := b[off:]
		n := int(binary.NativeEndian.Uint16(a[0:2]))
		if n < unix.SizeofNlAttr || n > len(a) {
			return fmt.Errorf("%w: attribute at offset %d: length %d outside [%d, %d]",
				kernfs.ErrMalformed, off, n, unix.SizeofNlAttr, len(a))
		}
		if err := fn(binary.NativeEndian.Uint16(a[2:4])&nlaTypeMask, a[unix.SizeofNlAttr:n]); err != nil {
			return err
		}
		off += nlAlign(n)
	}
	return nil
}

// nlAlign rounds n up to NLMSG_ALIGNTO (= NLA_ALIGNTO = 4).
func nlAlign(n int) int { return (n + 3) &^ 3 }

// nlaTypeMask strips NLA_F_NESTED and NLA_F_NET_BYTEORDER from an
// attribute type (include/uapi/linux/netlink.h NLA_TYPE_MASK).
const nlaTypeMask = 0x3fff
