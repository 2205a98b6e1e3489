package watch

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"syscall"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"golang.org/x/sys/unix"
)

// The ethtool family (net/ethtool/netlink.c) notifies its "monitor"
// group of every settings change. Only ETHTOOL_MSG_CHANNELS_NTF is a
// hint: after ethtool -L a driver frees and requests vectors (mlx5, ice,
// MANA) or rewrites their affinities (virtnet_set_affinity), which no
// uevent announces. The others (rings, coalescing, features, link modes,
// ...) change the queues' settings, not their number; a driver that
// restarts its queues for one requests the same vectors, and the kernel
// keeps a user affinity across that (irq_setup_affinity preserves
// IRQD_AFFINITY_SET). Routine ring tuning would cost a round for nothing.

// ChannelsEvent is one ETHTOOL_MSG_CHANNELS_NTF, which the kernel sends
// after a channel count change (ethtool -L, through netlink or ioctl).
type ChannelsEvent struct {
	Index int    // ETHTOOL_A_HEADER_DEV_INDEX; 0 when absent
	Name  string // ETHTOOL_A_HEADER_DEV_NAME; empty when absent
	// The counts after the change (ETHTOOL_A_CHANNELS_*_COUNT); 0 when
	// absent, as for a driver without that kind of channel.
	RX, TX, Other, Combined uint32
}

// genlHdrLen is sizeof(struct genlmsghdr): cmd, version, reserved.
const genlHdrLen = 4

// altIfNameSize bounds ETHTOOL_A_HEADER_DEV_NAME: the kernel's policy
// for it is a string of at most ALTIFNAMSIZ-1 (128-1) bytes.
const altIfNameSize = 128

// attrU32 reads a u32 attribute, which must be exactly 4 bytes.
func attrU32(name string, v []byte) (uint32, error) {
	if len(v) != 4 {
		return 0, fmt.Errorf("%w: %s of %d bytes, want 4", kernfs.ErrMalformed, name, len(v))
	}
	return binary.NativeEndian.Uint32(v), nil
}

// attrString reads a string attribute up to its NUL, at most max bytes.
func attrString(name string, v []byte, max int) (string, error) {
	if i := bytes.IndexByte(v, 0); i >= 0 {
		v = v[:i]
	}
	if len(v) > max {
		return "", fmt.Errorf("%w: %s of %d bytes, more than %d", kernfs.ErrMalformed, name, len(v), max)
	}
	return string(v), nil
}

// ParseEthtoolMessages parses a datagram received on the ethtool
// monitor group, whose messages have type family (given by nlctrl),
// into one ChannelsEvent per ETHTOOL_MSG_CHANNELS_NTF; it skips other
// messages. What breaks the wire format, or a channels notification
// naming no device, is an error wrapping kernfs.ErrMalformed. It never
// panics.
func ParseEthtoolMessages(b []byte, family uint16) ([]ChannelsEvent, error) {
	var evs []ChannelsEvent
	err := walkMessages(b, "ethtool", func(h nlHeader, p []byte) error {
		if h.Type != family {
			return nil
		}
		if len(p) < genlHdrLen {
			return fmt.Errorf("%w: genlmsghdr of %d bytes, want %d", kernfs.ErrMalformed, len(p), genlHdrLen)
		}
		if p[0] != unix.ETHTOOL_MSG_CHANNELS_NTF {
			return nil
		}
		ev, err := parseChannels(p[genlHdrLen:])
		if err != nil {
			return fmt.Errorf("ETHTOOL_MSG_CHANNELS_NTF: %w", err)
		}
		evs = append(evs, ev)
		return nil
	})
	return evs, err
}

// parseChannels parses the ETHTOOL_A_CHANNELS_* attributes of a
// channels notification (ethnl_channels_fill_reply).
func parseChannels(b []byte) (ChannelsEvent, error) {
	var (
		ev     ChannelsEvent
		header bool
	)
	err := walkAttrs(b, func(typ uint16, v []byte) error {
		var err error
		switch typ {
		case unix.ETHTOOL_A_CHANNELS_HEADER:
			header = true
			err = parseEthtoolHeader(v, &ev)
		case unix.ETHTOOL_A_CHANNELS_RX_COUNT:
			ev.RX, err = attrU32("ETHTOOL_A_CHANNELS_RX_COUNT", v)
		case unix.ETHTOOL_A_CHANNELS_TX_COUNT:
			ev.TX, err = attrU32("ETHTOOL_A_CHANNELS_TX_COUNT", v)
		case unix.ETHTOOL_A_CHANNELS_OTHER_COUNT:
			ev.Other, err = attrU32("ETHTOOL_A_CHANNELS_OTHER_COUNT", v)
		case unix.ETHTOOL_A_CHANNELS_COMBINED_COUNT:
			ev.Combined, err = attrU32("ETHTOOL_A_CHANNELS_COMBINED_COUNT", v)
		}
		return err
	})
	switch {
	case err != nil:
		return ChannelsEvent{}, err
	case !header:
		return ChannelsEvent{}, fmt.Errorf("%w: no ETHTOOL_A_CHANNELS_HEADER", kernfs.ErrMalformed)
	}
	return ev, nil
}

// parseEthtoolHeader parses the nested ETHTOOL_A_HEADER_* attributes
// into ev's device; one of the index and the name must be there.
func parseEthtoolHeader(b []byte, ev *ChannelsEvent) error {
	err := walkAttrs(b, func(typ uint16, v []byte) error {
		switch typ {
		case unix.ETHTOOL_A_HEADER_DEV_INDEX:
			i, err := attrU32("ETHTOOL_A_HEADER_DEV_INDEX", v)
			ev.Index = int(i)
			return err
		case unix.ETHTOOL_A_HEADER_DEV_NAME:
			s, err := attrString("ETHTOOL_A_HEADER_DEV_NAME", v, altIfNameSize-1)
			ev.Name = s
			return err
		}
		return nil
	})
	switch {
	case err != nil:
		return fmt.Errorf("ETHTOOL_A_CHANNELS_HEADER: %w", err)
	case ev.Index == 0 && ev.Name == "":
		return fmt.Errorf("%w: ETHTOOL_A_CHANNELS_HEADER names no device", kernfs.ErrMalformed)
	}
	return nil
}

// genlFamily is what nlctrl says of a generic netlink family.
type genlFamily struct {
	ID     uint16            // CTRL_ATTR_FAMILY_ID: the nlmsg_type of its messages
	Name   string            // CTRL_ATTR_FAMILY_NAME
	Groups map[string]uint32 // CTRL_ATTR_MCAST_GROUPS: group ids by name
}

// getFamilyRequest is a CTRL_CMD_GETFAMILY request for the family name,
// with sequence number seq, to send to the kernel (port 0).
func getFamilyRequest(name string, seq uint32) []byte {
	v := append([]byte(name), 0)
	attrLen := unix.SizeofNlAttr + len(v)
	n := unix.SizeofNlMsghdr + genlHdrLen + nlAlign(attrLen)
	b := make([]byte, n)
	binary.NativeEndian.PutUint32(b[0:], uint32(n))
	binary.NativeEndian.PutUint16(b[4:], unix.GENL_ID_CTRL)
	binary.NativeEndian.PutUint16(b[6:], unix.NLM_F_REQUEST)
	binary.NativeEndian.PutUint32(b[8:], seq)
	g := b[unix.SizeofNlMsghdr:]
	g[0], g[1] = unix.CTRL_CMD_GETFAMILY, 1
	a := g[genlHdrLen:]
	binary.NativeEndian.PutUint16(a[0:], uint16(attrLen))
	binary.NativeEndian.PutUint16(a[2:], unix.CTRL_ATTR_FAMILY_NAME)
	copy(a[unix.SizeofNlAttr:], v)
	return b
}

// parseFamilyReply parses a datagram received after a
// CTRL_CMD_GETFAMILY request with sequence number seq; ok is false when
// it holds no answer to it. An NLMSG_ERROR answer is its errno, wrapped
// in ErrNoFamily when ENOENT; a reply that does not parse, or has no
// family id, is an error wrapping kernfs.ErrMalformed.
func parseFamilyReply(b []byte, seq uint32) (f genlFamily, ok bool, err error) {
	var refused error // the NLMSG_ERROR answer, said without an offset
	err = walkMessages(b, "nlctrl", func(h nlHeader, p []byte) error {
		if h.Seq != seq || ok || refused != nil {
			return nil
		}
		switch h.Type {
		case unix.NLMSG_ERROR:
			if len(p) < 4 {
				return fmt.Errorf("%w: nlmsgerr of %d bytes", kernfs.ErrMalformed, len(p))
			}
			code := int64(int32(binary.NativeEndian.Uint32(p)))
			if code == 0 {
				return nil // an ACK, which was not asked for
			}
			errno := syscall.Errno(-code)
			if errno == unix.ENOENT {
				refused = fmt.Errorf("%w: CTRL_CMD_GETFAMILY: %w", ErrNoFamily, errno)
			} else {
				refused = os.NewSyscallError("CTRL_CMD_GETFAMILY", errno)
			}
			return nil
		case unix.GENL_ID_CTRL:
			if len(p) < genlHdrLen {
				return fmt.Errorf("%w: genlmsghdr of %d bytes, want %d", kernfs.ErrMalformed, len(p), genlHdrLen)
			}
			if p[0] != unix.CTRL_CMD_NEWFAMILY {
				return nil
			}
			var err error
			f, err = parseFamily(p[genlHdrLen:])
			ok = err == nil
			return err
		}
		return nil
	})
	if err == nil {
		err = refused
	}
	if err != nil {
		return genlFamily{}, false, err
	}
	return f, ok, nil
}

// parseFamily parses the CTRL_ATTR_* attributes of a CTRL_CMD_NEWFAMILY
// message (ctrl_fill_info in net/netlink/genetlink.c).
func parseFamily(b []byte) (genlFamily, error) {
	f := genlFamily{Groups: map[string]uint32{}}
	hasID := false
	err := walkAttrs(b, func(typ uint16, v []byte) error {
		switch typ {
		case unix.CTRL_ATTR_FAMILY_ID:
			if len(v) != 2 {
				return fmt.Errorf("%w: CTRL_ATTR_FAMILY_ID of %d bytes, want 2", kernfs.ErrMalformed, len(v))
			}
			f.ID, hasID = binary.NativeEndian.Uint16(v), true
		case unix.CTRL_ATTR_FAMILY_NAME:
			s, err := attrString("CTRL_ATTR_FAMILY_NAME", v, unix.GENL_NAMSIZ-1)
			f.Name = s
			return err
		case unix.CTRL_ATTR_MCAST_GROUPS:
			return walkAttrs(v, func(_ uint16, grp []byte) error { return parseGroup(grp, f.Groups) })
		}
		return nil
	})
	switch {
	case err != nil:
		return genlFamily{}, err
	case !hasID:
		return genlFamily{}, fmt.Errorf("%w: no CTRL_ATTR_FAMILY_ID", kernfs.ErrMalformed)
	}
	return f, nil
}

// parseGroup adds one nested CTRL_ATTR_MCAST_GRP_* entry to groups.
func parseGroup(b []byte, groups map[string]uint32) error {
	var (
		name  string
		id    uint32
		hasID bool
	)
	err := walkAttrs(b, func(typ uint16, v []byte) error {
		var err error
		switch typ {
		case unix.CTRL_ATTR_MCAST_GRP_NAME:
			name, err = attrString("CTRL_ATTR_MCAST_GRP_NAME", v, unix.GENL_NAMSIZ-1)
		case unix.CTRL_ATTR_MCAST_GRP_ID:
			id, err = attrU32("CTRL_ATTR_MCAST_GRP_ID", v)
			hasID = true
		}
		return err
	})
	switch {
	case err != nil:
		return fmt.Errorf("CTRL_ATTR_MCAST_GROUPS: %w", err)
	case name == "" || !hasID || id == 0:
		return fmt.Errorf("%w: multicast group %q with id %d (present %v)", kernfs.ErrMalformed, name, id, hasID)
	}
	groups[name] = id
	return nil
}
