package netdev

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestEthtoolQueueStatsHost reads, never writes, the ethtool statistics of
// this machine's interfaces, and checks what each read gives is coherent.
func TestEthtoolQueueStatsHost(t *testing.T) {
	ents, err := os.ReadDir("/sys/class/net")
	if err != nil {
		t.Skipf("no /sys/class/net: %v", err)
	}
	read := 0
	for _, e := range ents {
		stats, rule, err := EthtoolQueueStats(e.Name())
		if errors.Is(err, ErrNoQueueStats) {
			t.Logf("%s: %v", e.Name(), err)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		read++
		t.Logf("%s: rule %q, %d queues", e.Name(), rule, len(stats))
		for _, s := range stats {
			t.Logf("  %s %d: %d packets, %d bytes (ifindex %d)", s.Type, s.ID, s.Packets, s.Bytes, s.Ifindex)
			if s.Ifindex <= 0 {
				t.Errorf("%s: ifindex %d", e.Name(), s.Ifindex)
			}
		}
	}
	if read == 0 {
		t.Skip("no interface here has per-queue counters in ethtool -S")
	}
}

func TestEthtoolQueueStatsMissingInterface(t *testing.T) {
	_, _, err := EthtoolQueueStats("nosuchif0")
	if err == nil || errors.Is(err, ErrNoQueueStats) {
		t.Fatalf("err = %v, want an error naming the missing interface", err)
	}
	t.Log(err)
	if _, _, err := EthtoolQueueStats("a-name-longer-than-ifnamsiz"); err == nil {
		t.Fatal("an over-long name was accepted")
	}
}

// TestEthtoolGuardPage: a kernel writes its whole string table whatever
// buffer it is given when the request's len is 0 (and whatever the len
// before the fix that answers a len not its own with len 0), which is what
// happens there when the count grows between two calls;
// the guard page after the buffer turns that into EFAULT. Read-only:
// ETHTOOL_GSTRINGS with len 0 and room for one string, on an interface with
// at least two.
func TestEthtoolGuardPage(t *testing.T) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Skip(err)
	}
	defer unix.Close(fd)
	ents, _ := os.ReadDir("/sys/class/net")
	for _, e := range ents {
		n, err := ethtoolStatsCount(fd, e.Name())
		if err != nil || n < 2 {
			continue
		}
		buf, err := newGuardedBuf(gstringsHdrLen + ethGStringLen)
		if err != nil {
			t.Fatal(err)
		}
		defer buf.free()
		binary.NativeEndian.PutUint32(buf.b[0:], unix.ETHTOOL_GSTRINGS)
		binary.NativeEndian.PutUint32(buf.b[4:], ethSSStats)
		err = ethtoolIoctl(fd, e.Name(), buf.b)
		if !errors.Is(err, unix.EFAULT) {
			t.Fatalf("%s: %d strings into a buffer for 1: err %v, want EFAULT", e.Name(), n, err)
		}
		t.Logf("%s: %d strings into a buffer for 1: %v", e.Name(), n, err)
		return
	}
	t.Skip("no interface with two or more ethtool stats")
}

func TestGuardedBufBounds(t *testing.T) {
	for _, size := range []int{0, -1, ethtoolMaxBytes + 1} {
		if _, err := newGuardedBuf(size); err == nil {
			t.Errorf("newGuardedBuf(%d) accepted", size)
		}
	}
	b, err := newGuardedBuf(ethtoolMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	b.b[0], b.b[len(b.b)-1] = 1, 1
	b.free()
}
