package watch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"golang.org/x/sys/unix"
)

// DumpGeneric asks the generic netlink family for a dump of command cmd
// with the request attributes attrs (already encoded, see AppendAttrU32)
// and returns the attributes of every reply, after the genlmsghdr. It is
// the one-shot side of the plumbing the listeners use (nlctrl lookup,
// framing, sender checks), for packages that ask the kernel a question
// rather than listen. A kernel without the family gives an error
// wrapping ErrNoFamily; one that refuses the command, its errno
// (EOPNOTSUPP, EINVAL for an unknown command, ...). An errno the kernel
// ends the dump with comes with the replies received before it, which
// the caller may keep (a dump cut short, say by a device that went);
// every other error comes with none. The whole exchange is bounded by
// timeout, and the replies by maxReplies: one more is an error.
func DumpGeneric(family string, cmd, version uint8, attrs []byte, maxReplies int, timeout time.Duration) ([][]byte, error) {
	c, err := openNetlink("genl "+family, unix.NETLINK_GENERIC, 0, 1<<20, 64<<10)
	if err != nil {
		return nil, err
	}
	defer c.close()
	f, err := c.resolveFamily(family, timeout)
	if err != nil {
		return nil, err
	}
	if err := c.f.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	const seq = 2 // resolveFamily used 1
	if err := c.send(dumpRequest(f.ID, cmd, version, attrs, seq)); err != nil {
		return nil, fmt.Errorf("%s: dump %d: %w", c.name, cmd, err)
	}
	var replies [][]byte
	for {
		b, port, _, err := c.recv()
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, fmt.Errorf("%s: dump %d: no end within %v: %w", c.name, cmd, timeout, err)
		case err != nil:
			return nil, fmt.Errorf("%s: dump %d: %w", c.name, cmd, err)
		case checkSender(port, nil) != nil:
			continue
		}
		done, err := parseDumpReplies(b, f.ID, seq, &replies)
		var errno syscall.Errno
		switch {
		case err != nil && done && errors.As(err, &errno):
			return replies, fmt.Errorf("%s: dump %d: %w", c.name, cmd, err)
		case err != nil:
			return nil, fmt.Errorf("%s: dump %d: %w", c.name, cmd, err)
		case len(replies) > maxReplies:
			return nil, fmt.Errorf("%s: dump %d: more than %d replies", c.name, cmd, maxReplies)
		case done:
			return replies, nil
		}
	}
}

// dumpRequest is a NLM_F_DUMP request for cmd of family id.
func dumpRequest(family uint16, cmd, version uint8, attrs []byte, seq uint32) []byte {
	n := unix.SizeofNlMsghdr + genlHdrLen + len(attrs)
	b := make([]byte, unix.SizeofNlMsghdr+genlHdrLen, n)
	binary.NativeEndian.PutUint32(b[0:], uint32(n))
	binary.NativeEndian.PutUint16(b[4:], family)
	binary.NativeEndian.PutUint16(b[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(b[8:], seq)
	b[unix.SizeofNlMsghdr], b[unix.SizeofNlMsghdr+1] = cmd, version
	return append(b, attrs...)
}

// parseDumpReplies appends to replies a copy of the attributes of each
// message of family with sequence number seq in datagram b; done is
// true at NLMSG_DONE. An NLMSG_ERROR, or an error code in NLMSG_DONE,
// is returned as its errno.
func parseDumpReplies(b []byte, family uint16, seq uint32, replies *[][]byte) (done bool, err error) {
	err = walkMessages(b, "genl", func(h nlHeader, p []byte) error {
		if h.Seq != seq || done {
			return nil
		}
		switch h.Type {
		case unix.NLMSG_DONE, unix.NLMSG_ERROR:
			done = true
			if len(p) < 4 {
				if h.Type == unix.NLMSG_DONE {
					return nil // an old kernel's empty NLMSG_DONE
				}
				return fmt.Errorf("%w: nlmsgerr of %d bytes", kernfs.ErrMalformed, len(p))
			}
			if code := int32(binary.NativeEndian.Uint32(p)); code < 0 {
				return os.NewSyscallError("dump", syscall.Errno(-code))
			}
		case family:
			if len(p) < genlHdrLen {
				return fmt.Errorf("%w: genlmsghdr of %d bytes, want %d", kernfs.ErrMalformed, len(p), genlHdrLen)
			}
			*replies = append(*replies, append([]byte(nil), p[genlHdrLen:]...))
		}
		return nil
	})
	return done, err
}

// WalkAttrs calls fn with the type (flags stripped) and payload of each
// netlink attribute in b, as returned by DumpGeneric; a length out of
// bounds is an error wrapping kernfs.ErrMalformed.
func WalkAttrs(b []byte, fn func(typ uint16, v []byte) error) error { return walkAttrs(b, fn) }

// AppendAttrU32 appends a u32 netlink attribute of type typ to b.
func AppendAttrU32(b []byte, typ uint16, v uint32) []byte {
	a := make([]byte, unix.SizeofNlAttr+4)
	binary.NativeEndian.PutUint16(a[0:], uint16(len(a)))
	binary.NativeEndian.PutUint16(a[2:], typ)
	binary.NativeEndian.PutUint32(a[4:], v)
	return append(b, a...)
}
