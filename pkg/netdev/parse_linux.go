package netdev

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/nl"
)

// attrs are the attributes of one reply by type, with the first error.
type attrs struct {
	names map[uint16]string
	v     map[uint16]uint64
	err   error
}

// readAttrs reads the attributes of b that names lists: u32s, but those
// in wide are 4 or 8 bytes (nla_put_uint). Others are skipped.
func readAttrs(b []byte, names map[uint16]string, wide ...uint16) *attrs {
	a := &attrs{names: names, v: make(map[uint16]uint64, len(names))}
	a.err = nl.WalkAttributes(b, func(typ uint16, v []byte) error {
		name, ok := names[typ]
		switch {
		case !ok:
		case len(v) == 4:
			a.v[typ] = uint64(binary.NativeEndian.Uint32(v))
		case len(v) == 8 && slices.Contains(wide, typ):
			a.v[typ] = binary.NativeEndian.Uint64(v)
		case slices.Contains(wide, typ):
			return fmt.Errorf("%w: %s of %d bytes, want 4 or 8", kernfs.ErrMalformed, name, len(v))
		default:
			return fmt.Errorf("%w: %s of %d bytes, want 4", kernfs.ErrMalformed, name, len(v))
		}
		return nil
	})
	return a
}

// need keeps an error naming the first of types that is absent.
func (a *attrs) need(types ...uint16) {
	for _, t := range types {
		if _, ok := a.v[t]; !ok && a.err == nil {
			a.err = fmt.Errorf("%w: no %s", kernfs.ErrMalformed, a.names[t])
		}
	}
}

// int returns attribute typ, def when absent; out of [min, MaxInt32] errs.
func (a *attrs) int(typ uint16, min, def int) int {
	v, ok := a.v[typ]
	switch {
	case !ok || a.err != nil:
		return def
	case v > math.MaxInt32 || int(v) < min:
		a.err = fmt.Errorf("%w: %s %d, want %d to %d", kernfs.ErrMalformed, a.names[typ], v, min, math.MaxInt32)
	}
	return int(v)
}

// knownType reports whether attribute typ is a known queue type.
func (a *attrs) knownType(typ uint16) bool { return a.v[typ] <= uint64(QueueTX) }

var queueAttrs = map[uint16]string{attrQueueID: "NETDEV_A_QUEUE_ID", attrQueueIfindex: "NETDEV_A_QUEUE_IFINDEX",
	attrQueueType: "NETDEV_A_QUEUE_TYPE", attrQueueNAPIID: "NETDEV_A_QUEUE_NAPI_ID"}

// parseQueue parses one queue-get reply; ok is false for an unknown type.
func parseQueue(b []byte) (q Queue, ok bool, err error) {
	a := readAttrs(b, queueAttrs)
	a.need(attrQueueID, attrQueueIfindex, attrQueueType)
	if a.err != nil || !a.knownType(attrQueueType) {
		return Queue{}, false, a.err
	}
	q = Queue{Type: QueueType(a.v[attrQueueType]), Ifindex: a.int(attrQueueIfindex, 1, 0), ID: a.int(attrQueueID, 0, 0), NAPI: -1}
	if a.v[attrQueueNAPIID] != 0 { // 0: a TX-only NAPI, before 6.14
		q.NAPI = a.int(attrQueueNAPIID, 1, -1)
	}
	if a.err != nil {
		return Queue{}, false, a.err
	}
	return q, true, nil
}

var napiAttrs = map[uint16]string{attrNAPIID: "NETDEV_A_NAPI_ID", attrNAPIIfindex: "NETDEV_A_NAPI_IFINDEX",
	attrNAPIIRQ: "NETDEV_A_NAPI_IRQ", attrNAPIPID: "NETDEV_A_NAPI_PID"}

// parseNAPI parses one napi-get reply; ok is false for id 0 (no NAPI).
func parseNAPI(b []byte) (n NAPI, ok bool, err error) {
	a := readAttrs(b, napiAttrs)
	a.need(attrNAPIID, attrNAPIIfindex)
	if a.err != nil || a.v[attrNAPIID] == 0 {
		return NAPI{}, false, a.err
	}
	n = NAPI{Ifindex: a.int(attrNAPIIfindex, 1, 0), ID: a.int(attrNAPIID, 1, 0), IRQ: a.int(attrNAPIIRQ, 0, -1), PID: a.int(attrNAPIPID, 0, -1)}
	if a.err != nil {
		return NAPI{}, false, a.err
	}
	return n, true, nil
}

var statsAttrs = map[uint16]string{attrQStatsIfindex: "NETDEV_A_QSTATS_IFINDEX", attrQStatsQueueType: "NETDEV_A_QSTATS_QUEUE_TYPE",
	attrQStatsQueueID: "NETDEV_A_QSTATS_QUEUE_ID", attrQStatsRXPackets: "NETDEV_A_QSTATS_RX_PACKETS",
	attrQStatsRXBytes: "NETDEV_A_QSTATS_RX_BYTES", attrQStatsTXPackets: "NETDEV_A_QSTATS_TX_PACKETS",
	attrQStatsTXBytes: "NETDEV_A_QSTATS_TX_BYTES"}

// parseStats parses one qstats-get reply of scope queue; ok is false for
// an unknown type and for a missing packet or byte count (not a zero).
func parseStats(b []byte) (s Stats, ok bool, err error) {
	a := readAttrs(b, statsAttrs, attrQStatsRXPackets, attrQStatsRXBytes, attrQStatsTXPackets, attrQStatsTXBytes)
	a.need(attrQStatsIfindex, attrQStatsQueueType, attrQStatsQueueID)
	if a.err != nil || !a.knownType(attrQStatsQueueType) {
		return Stats{}, false, a.err
	}
	s = Stats{Type: QueueType(a.v[attrQStatsQueueType]), Ifindex: a.int(attrQStatsIfindex, 1, 0), ID: a.int(attrQStatsQueueID, 0, 0)}
	packets, bytes := uint16(attrQStatsRXPackets), uint16(attrQStatsRXBytes)
	if s.Type == QueueTX {
		packets, bytes = attrQStatsTXPackets, attrQStatsTXBytes
	}
	var okp, okb bool
	s.Packets, okp = a.v[packets]
	s.Bytes, okb = a.v[bytes]
	if a.err != nil || !okp || !okb {
		return Stats{}, false, a.err
	}
	return s, true, nil
}
