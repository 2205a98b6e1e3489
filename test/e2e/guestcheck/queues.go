package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/netdev"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// queuePackets prints iface's per-queue rx packet counters in ethtool
// -S's 6.1 form ("     rx_queue_K_packets: N"), so the scenarios and the
// bench parse one format on every kernel: from the kernel's qstats-get
// where it answers for iface (virtio_net 6.10+ has no per-queue packets
// in ethtool -S any more), else from ethtool -S. A first line names the
// source ("source: qstats" or "source: ethtool").
func queuePackets(args []string, out io.Writer) error {
	if len(args) != 2 || args[0] != "-iface" {
		return badUsage(usage, "queue-packets: want -iface NAME")
	}
	iface := args[1]
	idx, err := ifindex(iface)
	if err != nil {
		return err
	}
	rx := map[int]uint64{}
	source := "qstats"
	st, err := netdev.DumpQStats()
	if err == nil {
		for _, s := range st {
			if s.Ifindex == idx && s.Type == netdev.QueueRX {
				rx[s.ID] = s.Packets
			}
		}
	}
	if err != nil && !netdev.Unavailable(err) {
		return fmt.Errorf("qstats-get: %w", err)
	}
	if len(rx) == 0 {
		source = "ethtool"
		st, _, err := netdev.EthtoolQueueStats(iface)
		if err != nil {
			return err
		}
		for _, s := range st {
			if s.Type == netdev.QueueRX {
				rx[s.ID] = s.Packets
			}
		}
	}
	fmt.Fprintf(out, "source: %s\n", source)
	for _, q := range slices.Sorted(maps.Keys(rx)) {
		fmt.Fprintf(out, "     rx_queue_%d_packets: %d\n", q, rx[q])
	}
	return nil
}

// netdevDump prints one guestinfo.NetdevReport as JSON. A kernel without the
// family (6.1) gives the errors, not a failure.
func netdevDump(out io.Writer) error {
	r := guestinfo.NetdevReport{Ifindex: map[string]int{}}
	ents, err := os.ReadDir("/sys/class/net")
	if err != nil {
		return err
	}
	for _, e := range ents {
		if i, err := ifindex(e.Name()); err == nil {
			r.Ifindex[e.Name()] = i
		}
	}
	r.Queues, err = netdev.DumpQueues()
	r.QueuesErr = errString(err)
	r.NAPIs, err = netdev.DumpNAPIs()
	r.NAPIsErr = errString(err)
	r.QStats, err = netdev.DumpQStats()
	r.QStatsErr = errString(err)
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s\n", b)
	return nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func ifindex(iface string) (int, error) {
	b, err := os.ReadFile(filepath.Join("/sys/class/net", iface, "ifindex"))
	if err != nil {
		return 0, err
	}
	i, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, errors.New("ifindex of " + iface + ": " + err.Error())
	}
	return i, nil
}
