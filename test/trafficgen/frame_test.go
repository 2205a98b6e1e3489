package main

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"slices"
	"testing"
)

func TestChecksumRFC1071Example(t *testing.T) {
	// A header with a well-known checksum (0xb861), checksum zeroed.
	h := []byte{0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0, 0,
		0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7}
	if got := checksum(h); got != 0xb861 {
		t.Errorf("checksum = %#04x, want 0xb861", got)
	}
}

func TestBuildFrames(t *testing.T) {
	cfg, err := parseFlags([]string{"-iface", "t", "-flows", "3", "-size", "100", "-src", "198.18.1.2", "-dst", "198.19.3.4"})
	if err != nil {
		t.Fatal(err)
	}
	src := net.HardwareAddr{0x02, 0, 0, 0, 0, 0x09}
	frames := buildFrames(cfg, src)
	if len(frames) != 3 {
		t.Fatalf("%d frames, want 3", len(frames))
	}
	for i, f := range frames {
		if len(f) != 100 {
			t.Fatalf("frame %d: %d bytes, want 100", i, len(f))
		}
		if !bytes.Equal(f[0:6], []byte{0x52, 0x54, 0x00, 0xe2, 0xe0, 0x00}) || !bytes.Equal(f[6:12], src) {
			t.Errorf("frame %d: MACs % x / % x", i, f[0:6], f[6:12])
		}
		if et := binary.BigEndian.Uint16(f[12:14]); et != 0x0800 {
			t.Errorf("frame %d: ethertype %#04x", i, et)
		}
		ip := f[14:34]
		if ip[0] != 0x45 || ip[8] != 1 || ip[9] != 17 {
			t.Errorf("frame %d: version/IHL %#x ttl %d proto %d", i, ip[0], ip[8], ip[9])
		}
		if l := binary.BigEndian.Uint16(ip[2:4]); l != 86 {
			t.Errorf("frame %d: IP total length %d, want 86", i, l)
		}
		if c := checksum(ip); c != 0 {
			t.Errorf("frame %d: IP header does not check (%#04x)", i, c)
		}
		s, _ := netip.AddrFromSlice(ip[12:16])
		d, _ := netip.AddrFromSlice(ip[16:20])
		if s.String() != "198.18.1.2" || d.String() != "198.19.3.4" {
			t.Errorf("frame %d: %v -> %v", i, s, d)
		}
		udp := f[34:]
		sp, dp, ul := binary.BigEndian.Uint16(udp[0:2]), binary.BigEndian.Uint16(udp[2:4]), binary.BigEndian.Uint16(udp[4:6])
		if sp != uint16(1000+i) || dp != 1000 || ul != 66 {
			t.Errorf("frame %d: UDP %d -> %d length %d, want %d -> 1000 length 66", i, sp, dp, ul, 1000+i)
		}
		if !bytes.Equal(udp[8:], make([]byte, 58)) {
			t.Errorf("frame %d: payload not zero", i)
		}
	}
}

func TestScheduleEven(t *testing.T) {
	if got := schedule(4, nil); !slices.Equal(got, []uint16{0, 1, 2, 3}) {
		t.Errorf("schedule(4, nil) = %v", got)
	}
	if got := schedule(3, []int{2}); !slices.Equal(got, []uint16{0, 1, 2, 0, 1, 2}) {
		t.Errorf("schedule(3, [2]) = %v", got)
	}
}

func TestScheduleWeights(t *testing.T) {
	got := schedule(8, []int{8, 1, 1, 1})
	counts := map[uint16]int{}
	for _, f := range got {
		counts[f]++
	}
	want := map[uint16]int{0: 8, 1: 1, 2: 1, 3: 1, 4: 8, 5: 1, 6: 1, 7: 1}
	if len(got) != 22 || len(counts) != len(want) {
		t.Fatalf("schedule = %v", got)
	}
	for f, n := range want {
		if counts[f] != n {
			t.Errorf("flow %d: %d turns, want %d (%v)", f, counts[f], n, got)
		}
	}
	// An elephant's turns are spread: no gap much longer than the
	// cycle over its weight (22/8).
	var last = -1
	for i, f := range append(got, got...) {
		if f != 0 {
			continue
		}
		if last >= 0 && i-last > 4 {
			t.Errorf("flow 0: gap of %d between turns (%v)", i-last, got)
		}
		last = i
	}
}

func TestScheduleLargest(t *testing.T) {
	w := make([]int, maxFlows)
	for i := range w {
		w[i] = maxWeight
	}
	if got := len(schedule(maxFlows, w)); got != maxFlows*maxWeight {
		t.Errorf("largest cycle = %d turns", got)
	}
}
