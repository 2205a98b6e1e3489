package load

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/numairqd/numairqd/pkg/netdev"
)

// TestNICInterfaces: only interfaces with a device link are asked for
// queue counters (not veths, bridges or lo), with their ifindex; one
// whose ifindex is unreadable or not a number is left out.
func TestNICInterfaces(t *testing.T) {
	sys := t.TempDir()
	mk := func(name, ifindex string, device bool) {
		dir := filepath.Join(sys, "class", "net", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if ifindex != "" {
			if err := os.WriteFile(filepath.Join(dir, "ifindex"), []byte(ifindex), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if device {
			if err := os.Symlink("../../../devices/pci0000:00/0000:00:03.0", filepath.Join(dir, "device")); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("lo", "1\n", false)
	mk("eth0", "2\n", true)
	mk("veth1a2b", "7\n", false)
	mk("eth1", "x\n", true)
	mk("eth2", "", true)
	mk("ens5", "12\n", true)
	got, err := nicInterfaces(sys)
	if err != nil {
		t.Fatal(err)
	}
	want := []ifaceKey{{"ens5", 12}, {"eth0", 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nicInterfaces = %v, want %v", got, want)
	}
	if _, err := nicInterfaces(filepath.Join(sys, "missing")); err == nil {
		t.Error("no error for a sysfs without class/net")
	}
}

// TestNetCountersRead: qstats-get where the kernel has an interface's
// queues (rx and tx of one id added up), ethtool -S for the others; an
// interface whose driver has no per-queue counters is asked once, an
// error is passed on without dropping the rest, and an interface that
// is gone is forgotten.
func TestNetCountersRead(t *testing.T) {
	sys := t.TempDir()
	for name, idx := range map[string]string{"eth0": "2", "eth1": "3", "eth2": "4", "eth3": "5"} {
		dir := filepath.Join(sys, "class", "net", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "ifindex"), []byte(idx+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../../../devices/x", filepath.Join(dir, "device")); err != nil {
			t.Fatal(err)
		}
	}
	asked := map[string]int{}
	broken := errors.New("ethtool stats of eth3: EIO")
	n := NewNetCounters(sys)
	n.qstats = func() ([]netdev.Stats, error) {
		return []netdev.Stats{
			{Ifindex: 2, Type: netdev.QueueRX, ID: 0, Packets: 100},
			{Ifindex: 2, Type: netdev.QueueTX, ID: 0, Packets: 50},
			{Ifindex: 2, Type: netdev.QueueRX, ID: 1, Packets: 10},
			{Ifindex: 9, Type: netdev.QueueRX, ID: 0, Packets: 7}, // not a NIC of ours
		}, nil
	}
	n.ethtool = func(iface string) ([]netdev.Stats, string, error) {
		asked[iface]++
		switch iface {
		case "eth1":
			return nil, "", netdev.ErrNoQueueStats
		case "eth2":
			return []netdev.Stats{{Type: netdev.QueueRX, ID: 0, Packets: 3}, {Type: netdev.QueueTX, ID: 0, Packets: 4}}, "test", nil
		}
		return nil, "", broken
	}
	for range 2 {
		c := n.ReadQueues()
		if !errors.Is(c.Err, broken) {
			t.Errorf("Err = %v, want %v", c.Err, broken)
		}
		wantSrc := map[string]string{"eth0": SourceQStats, "eth2": SourceEthtool}
		if !reflect.DeepEqual(c.Sources, wantSrc) {
			t.Errorf("Sources = %v, want %v", c.Sources, wantSrc)
		}
		slices.SortFunc(c.Counts, func(a, b QueueCount) int { return cmp.Or(cmp.Compare(a.Interface, b.Interface), a.Queue-b.Queue) })
		want := []QueueCount{{"eth0", 0, 150}, {"eth0", 1, 10}, {"eth2", 0, 7}}
		if !reflect.DeepEqual(c.Counts, want) {
			t.Errorf("Counts = %v, want %v", c.Counts, want)
		}
	}
	if asked["eth1"] != 1 || asked["eth0"] != 0 || asked["eth2"] != 2 {
		t.Errorf("ethtool asked %v; want eth1 once (no counters), eth0 never (qstats), eth2 each time", asked)
	}
	if err := os.RemoveAll(filepath.Join(sys, "class", "net", "eth1")); err != nil {
		t.Fatal(err)
	}
	n.ReadQueues()
	if n.known(ifaceKey{"eth1", 3}) {
		t.Error("eth1 is gone but still remembered")
	}
}
