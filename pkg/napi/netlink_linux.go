package napi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/watch"
)

// The netdev generic netlink family (include/uapi/linux/netdev.h).
const (
	netdevFamily     = "netdev"
	netdevVersion    = 1
	netdevCmdNAPIGet = 11 // NETDEV_CMD_NAPI_GET (6.8+)

	napiAttrIfindex = 1 // NETDEV_A_NAPI_IFINDEX, u32
	napiAttrID      = 2 // NETDEV_A_NAPI_ID, u32
	napiAttrIRQ     = 3 // NETDEV_A_NAPI_IRQ, u32, when the driver set it
	napiAttrPID     = 4 // NETDEV_A_NAPI_PID, u32, when threaded
)

// netlinkTimeout bounds one napi-get dump.
const netlinkTimeout = 5 * time.Second

// napiInfo is one napi-get reply.
type napiInfo struct {
	ifindex, id, irq, pid int // irq and pid -1 when absent
}

// dumpNAPIs runs napi-get for ifindex. A kernel without it gives an
// error for which unavailable is true.
func dumpNAPIs(ifindex int) ([]napiInfo, error) {
	req := watch.AppendAttrU32(nil, napiAttrIfindex, uint32(ifindex))
	replies, err := watch.DumpGeneric(netdevFamily, netdevCmdNAPIGet, netdevVersion, req, netlinkTimeout)
	if err != nil {
		return nil, err
	}
	out := make([]napiInfo, 0, len(replies))
	for i, b := range replies {
		n, err := parseNAPI(b)
		if err != nil {
			return nil, fmt.Errorf("napi-get reply %d: %w", i, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// unavailable reports whether err from dumpNAPIs means a kernel without
// napi-get (before 6.8: no "netdev" family before 6.3, and the family
// refusing the unknown command after), to fall back to /proc.
func unavailable(err error) bool {
	return errors.Is(err, watch.ErrNoFamily) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EINVAL)
}

// parseNAPI parses the NETDEV_A_NAPI_* attributes of one reply
// (netdev_nl_napi_fill_one); ifindex and id are required.
func parseNAPI(b []byte) (napiInfo, error) {
	n := napiInfo{ifindex: -1, id: -1, irq: -1, pid: -1}
	err := watch.WalkAttrs(b, func(typ uint16, v []byte) error {
		var dst *int
		name := ""
		switch typ {
		case napiAttrIfindex:
			dst, name = &n.ifindex, "NETDEV_A_NAPI_IFINDEX"
		case napiAttrID:
			dst, name = &n.id, "NETDEV_A_NAPI_ID"
		case napiAttrIRQ:
			dst, name = &n.irq, "NETDEV_A_NAPI_IRQ"
		case napiAttrPID:
			dst, name = &n.pid, "NETDEV_A_NAPI_PID"
		default:
			return nil
		}
		if len(v) != 4 {
			return fmt.Errorf("%w: %s of %d bytes, want 4", kernfs.ErrMalformed, name, len(v))
		}
		x := int32(binary.NativeEndian.Uint32(v))
		if x < 0 {
			return fmt.Errorf("%w: %s %d", kernfs.ErrMalformed, name, x)
		}
		*dst = int(x)
		return nil
	})
	switch {
	case err != nil:
		return napiInfo{}, err
	case n.ifindex < 0 || n.id < 0:
		return napiInfo{}, fmt.Errorf("%w: no NETDEV_A_NAPI_IFINDEX or NETDEV_A_NAPI_ID", kernfs.ErrMalformed)
	}
	return n, nil
}
