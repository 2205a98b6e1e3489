package netdev

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/watch"
)

// field is one attribute a parser reads: a u32 (exactly 4 bytes) or,
// with uint, a netlink "uint" (4 or 8 bytes).
type field struct {
	name string
	uint bool
	set  bool
	v    uint64
}

// readFields reads into fields, by attribute type, the attributes of
// one reply; the others, and those of later kernels, are skipped.
func readFields(b []byte, fields map[uint16]*field) error {
	return watch.WalkAttrs(b, func(typ uint16, v []byte) error {
		f, ok := fields[typ]
		if !ok {
			return nil
		}
		switch {
		case len(v) == 4:
			f.v = uint64(binary.NativeEndian.Uint32(v))
		case len(v) == 8 && f.uint:
			f.v = binary.NativeEndian.Uint64(v)
		case f.uint:
			return fmt.Errorf("%w: %s of %d bytes, want 4 or 8", kernfs.ErrMalformed, f.name, len(v))
		default:
			return fmt.Errorf("%w: %s of %d bytes, want 4", kernfs.ErrMalformed, f.name, len(v))
		}
		f.set = true
		return nil
	})
}

// required is an error naming the first of fs that is absent.
func required(fs ...*field) error {
	for _, f := range fs {
		if !f.set {
			return fmt.Errorf("%w: no %s", kernfs.ErrMalformed, f.name)
		}
	}
	return nil
}

// intValue is f's value as an int, at least min and at most MaxInt32
// (ifindexes, queue indexes and NAPI ids are ints or fit one in the
// kernel), or an error naming f and the value.
func intValue(f *field, min int) (int, error) {
	if f.v > math.MaxInt32 || int(f.v) < min {
		return 0, fmt.Errorf("%w: %s %d, want %d to %d", kernfs.ErrMalformed, f.name, f.v, min, math.MaxInt32)
	}
	return int(f.v), nil
}

// queueType is f's enum netdev_queue_type; ok is false for a type this
// package does not know (none yet), whose reply the caller skips.
func queueType(f *field) (t QueueType, ok bool) {
	switch f.v {
	case uint64(QueueRX), uint64(QueueTX):
		return QueueType(f.v), true
	}
	return 0, false
}

// parseQueue parses one queue-get reply (netdev_nl_queue_fill_one): id,
// type and ifindex are required, napi-id optional. ok is false for a
// queue type not known here.
func parseQueue(b []byte) (q Queue, ok bool, err error) {
	id := field{name: "NETDEV_A_QUEUE_ID"}
	ifindex := field{name: "NETDEV_A_QUEUE_IFINDEX"}
	typ := field{name: "NETDEV_A_QUEUE_TYPE"}
	napi := field{name: "NETDEV_A_QUEUE_NAPI_ID"}
	err = readFields(b, map[uint16]*field{attrQueueID: &id, attrQueueIfindex: &ifindex, attrQueueType: &typ, attrQueueNAPIID: &napi})
	if err == nil {
		err = required(&id, &ifindex, &typ)
	}
	if err != nil {
		return Queue{}, false, err
	}
	q = Queue{NAPI: -1}
	if q.Type, ok = queueType(&typ); !ok {
		return Queue{}, false, nil
	}
	if q.Ifindex, err = intValue(&ifindex, 1); err != nil {
		return Queue{}, false, err
	}
	if q.ID, err = intValue(&id, 0); err != nil {
		return Queue{}, false, err
	}
	if napi.set && napi.v != 0 { // 0: a TX-only NAPI, before 6.14
		if q.NAPI, err = intValue(&napi, 1); err != nil {
			return Queue{}, false, err
		}
	}
	return q, true, nil
}

// parseNAPI parses one napi-get reply (netdev_nl_napi_fill_one): id and
// ifindex are required, irq and pid optional. ok is false for id 0,
// which names no NAPI (the dump skips them since napi_id_valid).
func parseNAPI(b []byte) (n NAPI, ok bool, err error) {
	id := field{name: "NETDEV_A_NAPI_ID"}
	ifindex := field{name: "NETDEV_A_NAPI_IFINDEX"}
	irq := field{name: "NETDEV_A_NAPI_IRQ"}
	pid := field{name: "NETDEV_A_NAPI_PID"}
	err = readFields(b, map[uint16]*field{attrNAPIID: &id, attrNAPIIfindex: &ifindex, attrNAPIIRQ: &irq, attrNAPIPID: &pid})
	if err == nil {
		err = required(&id, &ifindex)
	}
	if err != nil || id.v == 0 {
		return NAPI{}, false, err
	}
	n = NAPI{IRQ: -1, PID: -1}
	if n.Ifindex, err = intValue(&ifindex, 1); err != nil {
		return NAPI{}, false, err
	}
	if n.ID, err = intValue(&id, 1); err != nil {
		return NAPI{}, false, err
	}
	if irq.set {
		if n.IRQ, err = intValue(&irq, 0); err != nil {
			return NAPI{}, false, err
		}
	}
	if pid.set {
		if n.PID, err = intValue(&pid, 0); err != nil {
			return NAPI{}, false, err
		}
	}
	return n, true, nil
}

// parseStats parses one qstats-get reply of scope queue
// (netdev_nl_stats_queue): ifindex, queue-type and queue-id are
// required. ok is false for a queue type not known here, and for a
// queue whose driver reports no packet or no byte count for its
// direction (the kernel leaves out the counters a driver does not
// keep): a missing counter is not a zero.
func parseStats(b []byte) (s Stats, ok bool, err error) {
	ifindex := field{name: "NETDEV_A_QSTATS_IFINDEX"}
	typ := field{name: "NETDEV_A_QSTATS_QUEUE_TYPE"}
	id := field{name: "NETDEV_A_QSTATS_QUEUE_ID"}
	rxPackets := field{name: "NETDEV_A_QSTATS_RX_PACKETS", uint: true}
	rxBytes := field{name: "NETDEV_A_QSTATS_RX_BYTES", uint: true}
	txPackets := field{name: "NETDEV_A_QSTATS_TX_PACKETS", uint: true}
	txBytes := field{name: "NETDEV_A_QSTATS_TX_BYTES", uint: true}
	err = readFields(b, map[uint16]*field{
		attrQStatsIfindex: &ifindex, attrQStatsQueueType: &typ, attrQStatsQueueID: &id,
		attrQStatsRXPackets: &rxPackets, attrQStatsRXBytes: &rxBytes,
		attrQStatsTXPackets: &txPackets, attrQStatsTXBytes: &txBytes,
	})
	if err == nil {
		err = required(&ifindex, &typ, &id)
	}
	if err != nil {
		return Stats{}, false, err
	}
	if s.Type, ok = queueType(&typ); !ok {
		return Stats{}, false, nil
	}
	if s.Ifindex, err = intValue(&ifindex, 1); err != nil {
		return Stats{}, false, err
	}
	if s.ID, err = intValue(&id, 0); err != nil {
		return Stats{}, false, err
	}
	packets, bytes := &rxPackets, &rxBytes
	if s.Type == QueueTX {
		packets, bytes = &txPackets, &txBytes
	}
	if !packets.set || !bytes.set {
		return Stats{}, false, nil
	}
	s.Packets, s.Bytes = packets.v, bytes.v
	return s, true, nil
}
