package main

import (
	"cmp"
	"encoding/binary"
	"net"
	"slices"
)

const (
	ethHeader  = 14
	ipv4Header = 20
	udpHeader  = 8
	// ttl 1: a frame that somehow got routed dies at the first hop.
	ttl = 1
)

// buildFrames returns one frame per flow: Ethernet from srcMAC to
// cfg.dstMAC, IPv4 from cfg.src to cfg.dst, UDP from port basePort+i to
// basePort. The payload is zero. The UDP checksum is 0 ("none", which
// IPv4 allows): the guest's IP layer drops the frames before UDP.
func buildFrames(cfg config, srcMAC net.HardwareAddr) [][]byte {
	frames := make([][]byte, cfg.flows)
	for i := range frames {
		f := make([]byte, cfg.size)
		copy(f[0:6], cfg.dstMAC)
		copy(f[6:12], srcMAC)
		binary.BigEndian.PutUint16(f[12:14], 0x0800) // IPv4

		ip := f[ethHeader : ethHeader+ipv4Header]
		ip[0] = 0x45 // version 4, 5 words of header
		binary.BigEndian.PutUint16(ip[2:4], uint16(cfg.size-ethHeader))
		binary.BigEndian.PutUint16(ip[6:8], 0x4000) // don't fragment
		ip[8] = ttl
		ip[9] = 17 // UDP
		src, dst := cfg.src.As4(), cfg.dst.As4()
		copy(ip[12:16], src[:])
		copy(ip[16:20], dst[:])
		binary.BigEndian.PutUint16(ip[10:12], checksum(ip))

		udp := f[ethHeader+ipv4Header:]
		binary.BigEndian.PutUint16(udp[0:2], uint16(basePort+i))
		binary.BigEndian.PutUint16(udp[2:4], basePort)
		binary.BigEndian.PutUint16(udp[4:6], uint16(cfg.size-ethHeader-ipv4Header))
		frames[i] = f
	}
	return frames
}

// checksum is the Internet checksum (RFC 1071) of b, of even length.
func checksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// schedule returns one cycle of flow indexes in sending order: flow i
// appears weight(i) times (weights[i%len(weights)], or 1 without
// weights), its turns spread evenly over the cycle so that every flow's
// rate is steady rather than bursty. Turn k of flow i sits at
// (k+phase(i))/weight(i) of the cycle, with phase(i) = (i+1/2)/flows so
// that flows of equal weight take their turns one after another rather
// than in a clump; equal weights give 0, 1, ..., flows-1 in every round.
func schedule(flows int, weights []int) []uint16 {
	type turn struct{ flow, k, w int }
	var turns []turn
	for i := range flows {
		w := 1
		if len(weights) > 0 {
			w = weights[i%len(weights)]
		}
		for k := range w {
			turns = append(turns, turn{i, k, w})
		}
	}
	// (k+phase)/w = (2*flows*k+2i+1) / (2*flows*w); compare in integers
	// (at most 2*4096*100*100, far within int). Ties keep flow order.
	pos := func(t turn) int { return 2*flows*t.k + 2*t.flow + 1 }
	slices.SortStableFunc(turns, func(a, b turn) int {
		return cmp.Compare(pos(a)*b.w, pos(b)*a.w)
	})
	out := make([]uint16, len(turns))
	for i, t := range turns {
		out[i] = uint16(t.flow)
	}
	return out
}
