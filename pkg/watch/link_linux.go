package watch

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"golang.org/x/sys/unix"
)

// ParseLinkMessages parses a datagram of netlink messages (nlmsghdr
// framed, native byte order) and returns one LinkEvent per RTM_NEWLINK
// or RTM_DELLINK; other message types are skipped. A header or
// attribute whose length runs past the buffer, or an ifinfomsg that is
// too short, is an error wrapping kernfs.ErrMalformed. It never panics.
func ParseLinkMessages(b []byte) ([]LinkEvent, error) {
	var evs []LinkEvent
	for off := 0; len(b)-off >= unix.SizeofNlMsghdr; {
		m := b[off:]
		n := int(binary.NativeEndian.Uint32(m[0:4]))
		typ := binary.NativeEndian.Uint16(m[4:6])
		if n < unix.SizeofNlMsghdr || n > len(m) {
			return evs, fmt.Errorf("rtnetlink message at offset %d: %w: length %d outside [%d, %d]",
				off, kernfs.ErrMalformed, n, unix.SizeofNlMsghdr, len(m))
		}
		if typ == unix.RTM_NEWLINK || typ == unix.RTM_DELLINK {
			ev, err := parseIfInfo(m[unix.SizeofNlMsghdr:n])
			if err != nil {
				return evs, fmt.Errorf("rtnetlink message at offset %d: %w", off, err)
			}
			ev.Deleted = typ == unix.RTM_DELLINK
			evs = append(evs, ev)
		}
		off += nlAlign(n)
	}
	return evs, nil
}

// parseIfInfo parses struct ifinfomsg and its IFLA_* attributes.
func parseIfInfo(b []byte) (LinkEvent, error) {
	if len(b) < unix.SizeofIfInfomsg {
		return LinkEvent{}, fmt.Errorf("%w: ifinfomsg of %d bytes, want %d", kernfs.ErrMalformed, len(b), unix.SizeofIfInfomsg)
	}
	ev := LinkEvent{
		Index: int(int32(binary.NativeEndian.Uint32(b[4:8]))),
		Up:    binary.NativeEndian.Uint32(b[8:12])&unix.IFF_UP != 0,
	}
	attrs := b[unix.SizeofIfInfomsg:]
	for off := 0; len(attrs)-off >= unix.SizeofRtAttr; {
		a := attrs[off:]
		n := int(binary.NativeEndian.Uint16(a[0:2]))
		typ := binary.NativeEndian.Uint16(a[2:4]) & nlaTypeMask
		if n < unix.SizeofRtAttr || n > len(a) {
			return LinkEvent{}, fmt.Errorf("%w: attribute at offset %d: length %d outside [%d, %d]",
				kernfs.ErrMalformed, off, n, unix.SizeofRtAttr, len(a))
		}
		if typ == unix.IFLA_IFNAME {
			name := a[unix.SizeofRtAttr:n]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			ev.Name = string(name)
		}
		off += nlAlign(n)
	}
	return ev, nil
}

// nlAlign rounds n up to NLMSG_ALIGNTO (= RTA_ALIGNTO = 4).
func nlAlign(n int) int { return (n + 3) &^ 3 }

// nlaTypeMask strips NLA_F_NESTED and NLA_F_NET_BYTEORDER from an
// attribute type (include/uapi/linux/netlink.h NLA_TYPE_MASK).
const nlaTypeMask = 0x3fff
