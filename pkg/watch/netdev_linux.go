package watch

import (
	"fmt"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// The netdev generic netlink family (6.3+) notifies its "mgmt" group
// when a device is registered, unregistered, or its XDP features change
// (netdev_genl_netdevice_event: NETDEV_REGISTER, NETDEV_UNREGISTER,
// NETDEV_XDP_FEAT_CHANGE); each notification carries the dev-get reply.
// A device that comes or goes may bring or free queue IRQs, and drivers
// change their XDP features as they reconfigure their queues (XDP TX
// rings, channel counts), which no uevent announces. Numbers from
// include/uapi/linux/netdev.h (torvalds/linux, generated from
// Documentation/netlink/specs/netdev.yaml).
const (
	netdevFamily          = "netdev" // NETDEV_FAMILY_NAME
	netdevGroupMgmt       = "mgmt"   // NETDEV_MCGRP_MGMT
	netdevCmdDevAddNtf    = 2        // NETDEV_CMD_DEV_ADD_NTF
	netdevCmdDevDelNtf    = 3        // NETDEV_CMD_DEV_DEL_NTF
	netdevCmdDevChangeNtf = 4        // NETDEV_CMD_DEV_CHANGE_NTF
	netdevAttrDevIfindex  = 1        // NETDEV_A_DEV_IFINDEX, u32
)

// DevChange is what a netdev "mgmt" notification says of its device.
type DevChange uint8

const (
	DevAdded   DevChange = iota + 1 // dev-add-ntf: registered
	DevRemoved                      // dev-del-ntf: unregistered
	DevChanged                      // dev-change-ntf: its XDP features changed
)

// String names the change as the spec's notification does.
func (c DevChange) String() string {
	switch c {
	case DevAdded:
		return "dev-add-ntf"
	case DevRemoved:
		return "dev-del-ntf"
	case DevChanged:
		return "dev-change-ntf"
	}
	return fmt.Sprintf("DevChange(%d)", uint8(c))
}

// DevEvent is one notification of the netdev family's "mgmt" group.
type DevEvent struct {
	Index  int // NETDEV_A_DEV_IFINDEX
	Change DevChange
}

// devChanges maps the notification commands to their change.
var devChanges = map[uint8]DevChange{
	netdevCmdDevAddNtf:    DevAdded,
	netdevCmdDevDelNtf:    DevRemoved,
	netdevCmdDevChangeNtf: DevChanged,
}

// ParseNetdevMessages parses a datagram received on the netdev "mgmt"
// group, whose messages have type family (given by nlctrl), into one
// DevEvent per dev-add, dev-del or dev-change notification; it skips
// other messages. What breaks the wire format, or a notification
// without a valid ifindex, is an error wrapping kernfs.ErrMalformed.
// It never panics.
func ParseNetdevMessages(b []byte, family uint16) ([]DevEvent, error) {
	var evs []DevEvent
	err := walkMessages(b, "netdev", func(h nlHeader, p []byte) error {
		if h.Type != family {
			return nil
		}
		if len(p) < genlHdrLen {
			return fmt.Errorf("%w: genlmsghdr of %d bytes, want %d", kernfs.ErrMalformed, len(p), genlHdrLen)
		}
		change, ok := devChanges[p[0]]
		if !ok {
			return nil
		}
		index, err := parseDevIfindex(p[genlHdrLen:])
		if err != nil {
			return fmt.Errorf("%v: %w", change, err)
		}
		evs = append(evs, DevEvent{Index: index, Change: change})
		return nil
	})
	return evs, err
}

// parseDevIfindex returns the NETDEV_A_DEV_IFINDEX of a dev-get reply
// (netdev_nl_dev_fill), which must be there and at least 1.
func parseDevIfindex(b []byte) (int, error) {
	index := -1
	err := walkAttrs(b, func(typ uint16, v []byte) error {
		if typ != netdevAttrDevIfindex {
			return nil
		}
		i, err := attrU32("NETDEV_A_DEV_IFINDEX", v)
		if err == nil && (i == 0 || i > 1<<31-1) {
			err = fmt.Errorf("%w: NETDEV_A_DEV_IFINDEX %d, want 1 to %d", kernfs.ErrMalformed, i, 1<<31-1)
		}
		index = int(i)
		return err
	})
	switch {
	case err != nil:
		return 0, err
	case index < 0:
		return 0, fmt.Errorf("%w: no NETDEV_A_DEV_IFINDEX", kernfs.ErrMalformed)
	}
	return index, nil
}
