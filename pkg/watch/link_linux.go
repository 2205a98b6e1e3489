package watch

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"golang.org/x/sys/unix"
)

// LinkEvent is one RTM_NEWLINK or RTM_DELLINK notification from
// rtnetlink's RTNLGRP_LINK group. Many NICs request their queue IRQs in
// ndo_open (ifup), which sends no uevent; a link coming up is the hint.
type LinkEvent struct {
	Index   int    // ifindex
	Name    string // IFLA_IFNAME; empty when absent
	Up      bool   // IFF_UP is set
	Deleted bool   // RTM_DELLINK
}

// ParseLinkMessages parses a datagram of netlink messages (nlmsghdr
// framed, native byte order) and returns one LinkEvent per RTM_NEWLINK
// or RTM_DELLINK; other message types are skipped. A header or
// attribute whose length runs past the buffer, or an ifinfomsg that is
// too short, is an error wrapping kernfs.ErrMalformed. It never panics.
func ParseLinkMessages(b []byte) ([]LinkEvent, error) {
	var evs []LinkEvent
	err := walkMessages(b, "rtnetlink", func(h nlHeader, p []byte) error {
		if h.Type != unix.RTM_NEWLINK && h.Type != unix.RTM_DELLINK {
			return nil
		}
		ev, err := parseIfInfo(p)
		if err != nil {
			return err
		}
		ev.Deleted = h.Type == unix.RTM_DELLINK
		evs = append(evs, ev)
		return nil
	})
	return evs, err
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
	err := walkAttrs(b[unix.SizeofIfInfomsg:], func(typ uint16, v []byte) error {
		if typ == unix.IFLA_IFNAME {
			if i := bytes.IndexByte(v, 0); i >= 0 {
				v = v[:i]
			}
			ev.Name = string(v)
		}
		return nil
	})
	return ev, err
}
