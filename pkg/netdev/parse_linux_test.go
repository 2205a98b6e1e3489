package netdev

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// attr encodes one netlink attribute with a payload of v, padded.
func attr(typ uint16, v []byte) []byte {
	b := make([]byte, 4, 4+len(v)+3)
	binary.NativeEndian.PutUint16(b[0:], uint16(4+len(v)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func u32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }
func u64(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }

// nlaNested is NLA_F_NESTED, which nla_nest_start sets.
const nlaNested = 0x8000

// queueReply is a queue-get reply as netdev_nl_queue_fill_one writes
// it: id, type, ifindex, then napi-id when linked, then what later
// kernels add (here an xsk nest, type 8 on 6.18).
func queueReply(id, typ, ifindex uint32, napi ...uint32) []byte {
	b := slices.Concat(attr(attrQueueID, u32(id)), attr(attrQueueType, u32(typ)), attr(attrQueueIfindex, u32(ifindex)))
	for _, n := range napi {
		b = append(b, attr(attrQueueNAPIID, u32(n))...)
	}
	return append(b, attr(8|nlaNested, nil)...)
}

// napiReply is a napi-get reply as netdev_nl_napi_fill_one writes it
// on 6.18: id, ifindex, irq (when set), threaded (uint, 6.17+), pid
// (when threaded), defer-hard-irqs, irq-suspend-timeout and
// gro-flush-timeout (uint). irq and pid are left out when negative.
func napiReply(id, ifindex uint32, irq, pid int) []byte {
	b := slices.Concat(attr(attrNAPIID, u32(id)), attr(attrNAPIIfindex, u32(ifindex)))
	if irq >= 0 {
		b = append(b, attr(attrNAPIIRQ, u32(uint32(irq)))...)
	}
	b = append(b, attr(10, u32(1))...)
	if pid >= 0 {
		b = append(b, attr(attrNAPIPID, u32(uint32(pid)))...)
	}
	return slices.Concat(b, attr(5, u32(0)), attr(9, u64(0)), attr(6, u64(20000)))
}

// statsReply is a qstats-get reply of scope queue as
// netdev_nl_stats_queue writes it: ifindex, queue-type, queue-id, then
// the counters the driver keeps, each a "uint" (4 bytes when it fits).
func statsReply(ifindex, typ, id uint32, counters ...[]byte) []byte {
	return slices.Concat(append([][]byte{attr(attrQStatsIfindex, u32(ifindex)),
		attr(attrQStatsQueueType, u32(typ)), attr(attrQStatsQueueID, u32(id))}, counters...)...)
}

func TestParseQueue(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		want Queue
		ok   bool
	}{
		{"rx with napi", queueReply(3, 0, 2, 8196), Queue{Ifindex: 2, Type: QueueRX, ID: 3, NAPI: 8196}, true},
		{"tx without napi", queueReply(0, 1, 7), Queue{Ifindex: 7, Type: QueueTX, ID: 0, NAPI: -1}, true},
		{"tx-only napi id 0, before 6.14", queueReply(1, 1, 7, 0), Queue{Ifindex: 7, Type: QueueTX, ID: 1, NAPI: -1}, true},
		{"a later queue type", queueReply(0, 2, 7), Queue{}, false},
		{"unknown attributes only add", append(attr(99, []byte{1, 2, 3}), queueReply(1, 0, 2)...), Queue{Ifindex: 2, ID: 1, NAPI: -1}, true},
	} {
		q, ok, err := parseQueue(c.b)
		if err != nil || ok != c.ok || q != c.want {
			t.Errorf("%s: got %+v, %v, %v; want %+v, %v", c.name, q, ok, err, c.want, c.ok)
		}
	}
	valid := queueReply(3, 0, 2, 8196)
	malformed(t, "queue", func(b []byte) error { _, _, err := parseQueue(b); return err }, map[string]struct {
		b    []byte
		says string
	}{
		"truncated":        {valid[:len(valid)-6], "length too short or too large"},
		"cut header":       {append(slices.Clone(valid), 8, 0), "length too short or too large"},
		"short napi id":    {slices.Concat(attr(attrQueueID, u32(1)), attr(attrQueueNAPIID, []byte{1, 2})), "NETDEV_A_QUEUE_NAPI_ID of 2 bytes, want 4"},
		"u64 ifindex":      {slices.Concat(attr(attrQueueID, u32(1)), attr(attrQueueIfindex, u64(2))), "NETDEV_A_QUEUE_IFINDEX of 8 bytes, want 4"},
		"no type":          {slices.Concat(attr(attrQueueID, u32(1)), attr(attrQueueIfindex, u32(2))), "no NETDEV_A_QUEUE_TYPE"},
		"no id":            {slices.Concat(attr(attrQueueType, u32(0)), attr(attrQueueIfindex, u32(2))), "no NETDEV_A_QUEUE_ID"},
		"no ifindex":       {slices.Concat(attr(attrQueueID, u32(1)), attr(attrQueueType, u32(0))), "no NETDEV_A_QUEUE_IFINDEX"},
		"ifindex 0":        {queueReply(1, 0, 0), "NETDEV_A_QUEUE_IFINDEX 0, want 1 to"},
		"id past int32":    {queueReply(math.MaxUint32, 0, 2), "NETDEV_A_QUEUE_ID 4294967295, want 0 to 2147483647"},
		"napi past int32":  {queueReply(1, 0, 2, 1<<31), "NETDEV_A_QUEUE_NAPI_ID 2147483648"},
		"attribute length": {append(slices.Clone(valid), 0xff, 0, 1, 0), "length too short or too large"},
	})
}

func TestParseNAPI(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		want NAPI
		ok   bool
	}{
		{"threaded with irq", napiReply(8193, 2, 27, 360), NAPI{Ifindex: 2, ID: 8193, IRQ: 27, PID: 360}, true},
		{"no irq from the driver, not threaded", napiReply(8194, 2, -1, -1), NAPI{Ifindex: 2, ID: 8194, IRQ: -1, PID: -1}, true},
		{"pid outside the caller's namespace", napiReply(8194, 2, -1, 0), NAPI{Ifindex: 2, ID: 8194, IRQ: -1, PID: 0}, true},
		{"6.8's four attributes", slices.Concat(attr(attrNAPIID, u32(9)), attr(attrNAPIIfindex, u32(3)), attr(attrNAPIIRQ, u32(40)), attr(attrNAPIPID, u32(700))),
			NAPI{Ifindex: 3, ID: 9, IRQ: 40, PID: 700}, true},
		{"id 0 names no NAPI", napiReply(0, 2, -1, 55), NAPI{}, false},
	} {
		n, ok, err := parseNAPI(c.b)
		if err != nil || ok != c.ok || n != c.want {
			t.Errorf("%s: got %+v, %v, %v; want %+v, %v", c.name, n, ok, err, c.want, c.ok)
		}
	}
	bare := slices.Concat(attr(attrNAPIID, u32(8194)), attr(attrNAPIIfindex, u32(2)))
	malformed(t, "napi", func(b []byte) error { _, _, err := parseNAPI(b); return err }, map[string]struct {
		b    []byte
		says string
	}{
		"no id":        {attr(attrNAPIIfindex, u32(2)), "no NETDEV_A_NAPI_ID"},
		"no ifindex":   {attr(attrNAPIID, u32(2)), "no NETDEV_A_NAPI_IFINDEX"},
		"short pid":    {append(slices.Clone(bare), attr(attrNAPIPID, []byte{1, 2})...), "NETDEV_A_NAPI_PID of 2 bytes, want 4"},
		"u64 irq":      {append(slices.Clone(bare), attr(attrNAPIIRQ, u64(3))...), "NETDEV_A_NAPI_IRQ of 8 bytes, want 4"},
		"negative irq": {append(slices.Clone(bare), attr(attrNAPIIRQ, u32(math.MaxUint32))...), "NETDEV_A_NAPI_IRQ 4294967295"},
		"ifindex 0":    {napiReply(5, 0, -1, -1), "NETDEV_A_NAPI_IFINDEX 0, want 1 to"},
		"truncated":    {bare[:len(bare)-2], "length too short or too large"},
		"bad length":   {append(slices.Clone(bare), 0xff, 0, 4, 0), "length too short or too large"},
	})
}

func TestParseStats(t *testing.T) {
	rx := func(p, b []byte) [][]byte {
		return [][]byte{attr(attrQStatsRXPackets, p), attr(attrQStatsRXBytes, b)}
	}
	for _, c := range []struct {
		name string
		b    []byte
		want Stats
		ok   bool
	}{
		{"rx, u32 counters", statsReply(4, 0, 0, rx(u32(33785), u32(984535892))...), Stats{Ifindex: 4, Type: QueueRX, Packets: 33785, Bytes: 984535892}, true},
		{"rx, u64 bytes", statsReply(4, 0, 1, rx(u32(7), u64(1<<40))...), Stats{Ifindex: 4, ID: 1, Packets: 7, Bytes: 1 << 40}, true},
		{"tx with more counters", statsReply(4, 1, 2, attr(attrQStatsTXPackets, u32(5)), attr(attrQStatsTXBytes, u32(600)),
			attr(29, u32(1)), attr(30, u32(1))), Stats{Ifindex: 4, Type: QueueTX, ID: 2, Packets: 5, Bytes: 600}, true},
		{"tx reply reads tx counters only", statsReply(4, 1, 0, append(rx(u32(1), u32(2)), attr(attrQStatsTXPackets, u32(3)), attr(attrQStatsTXBytes, u32(4)))...),
			Stats{Ifindex: 4, Type: QueueTX, Packets: 3, Bytes: 4}, true},
		{"driver keeps no byte count", statsReply(4, 0, 0, attr(attrQStatsRXPackets, u32(1)), attr(12, u32(0))), Stats{}, false},
		{"driver keeps only tx-stop", statsReply(4, 1, 0, attr(29, u32(3))), Stats{}, false},
		{"a later queue type", statsReply(4, 2, 0, rx(u32(1), u32(2))...), Stats{}, false},
	} {
		s, ok, err := parseStats(c.b)
		if err != nil || ok != c.ok || s != c.want {
			t.Errorf("%s: got %+v, %v, %v; want %+v, %v", c.name, s, ok, err, c.want, c.ok)
		}
	}
	malformed(t, "qstats", func(b []byte) error { _, _, err := parseStats(b); return err }, map[string]struct {
		b    []byte
		says string
	}{
		"6-byte counter":  {statsReply(4, 0, 0, attr(attrQStatsRXPackets, make([]byte, 6))), "NETDEV_A_QSTATS_RX_PACKETS of 6 bytes, want 4 or 8"},
		"u64 queue id":    {slices.Concat(attr(attrQStatsIfindex, u32(4)), attr(attrQStatsQueueType, u32(0)), attr(attrQStatsQueueID, u64(0))), "NETDEV_A_QSTATS_QUEUE_ID of 8 bytes, want 4"},
		"device scope":    {slices.Concat(attr(attrQStatsIfindex, u32(4)), attr(attrQStatsRXPackets, u32(1))), "no NETDEV_A_QSTATS_QUEUE_TYPE"},
		"no ifindex":      {slices.Concat(attr(attrQStatsQueueType, u32(0)), attr(attrQStatsQueueID, u32(0))), "no NETDEV_A_QSTATS_IFINDEX"},
		"no queue id":     {slices.Concat(attr(attrQStatsIfindex, u32(4)), attr(attrQStatsQueueType, u32(0))), "no NETDEV_A_QSTATS_QUEUE_ID"},
		"ifindex 0":       {statsReply(0, 0, 0, rx(u32(1), u32(2))...), "NETDEV_A_QSTATS_IFINDEX 0, want 1 to"},
		"truncated":       {statsReply(4, 0, 0, rx(u32(1), u32(2))...)[:30], "length too short or too large"},
		"bad attr length": {append(statsReply(4, 0, 0), 3, 0, 8, 0), "length too short or too large"},
	})
}

// malformed checks that each case is an error wrapping
// kernfs.ErrMalformed that says what is wrong.
func malformed(t *testing.T, what string, parse func([]byte) error, cases map[string]struct {
	b    []byte
	says string
}) {
	t.Helper()
	for name, c := range cases {
		err := parse(c.b)
		switch {
		case c.says == "" && err != nil:
			t.Errorf("%s %s: %v, want no error", what, name, err)
		case c.says == "":
		case !errors.Is(err, kernfs.ErrMalformed) || !strings.Contains(err.Error(), c.says):
			t.Errorf("%s %s: got %v, want ErrMalformed saying %q", what, name, err, c.says)
		}
	}
}

// FuzzParse feeds the same bytes to the three parsers: none may panic,
// every error wraps kernfs.ErrMalformed, and what parses is in range.
func FuzzParse(f *testing.F) {
	f.Add(queueReply(3, 0, 2, 8196))
	f.Add(napiReply(8193, 2, 27, 360))
	f.Add(statsReply(4, 1, 2, attr(attrQStatsTXPackets, u64(5)), attr(attrQStatsTXBytes, u32(600))))
	f.Add(attr(attrQueueID|nlaNested, queueReply(1, 1, 1)))
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(what string, ok bool, err error, valid bool) {
			if err != nil && !errors.Is(err, kernfs.ErrMalformed) {
				t.Fatalf("%s: error %v does not wrap ErrMalformed", what, err)
			}
			if err != nil && ok || ok && !valid {
				t.Fatalf("%s: ok %v with error %v, or out of range", what, ok, err)
			}
		}
		q, ok, err := parseQueue(b)
		check("queue", ok, err, q.Ifindex >= 1 && q.ID >= 0 && (q.NAPI == -1 || q.NAPI >= 1) && q.Type <= QueueTX)
		n, ok, err := parseNAPI(b)
		check("napi", ok, err, n.Ifindex >= 1 && n.ID >= 1 && n.IRQ >= -1 && n.PID >= -1)
		s, ok, err := parseStats(b)
		check("qstats", ok, err, s.Ifindex >= 1 && s.ID >= 0 && s.Type <= QueueTX)
	})
}

func TestQueueTypeString(t *testing.T) {
	if QueueRX.String() != "rx" || QueueTX.String() != "tx" || QueueType(7).String() != "QueueType(7)" {
		t.Errorf("got %q %q %q", QueueRX, QueueTX, QueueType(7))
	}
}
