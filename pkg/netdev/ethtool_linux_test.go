package netdev

import (
	"errors"
	"os"
	"testing"
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
