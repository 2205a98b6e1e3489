package netdev

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrNoQueueStats says that ethtool -S has no known per-queue counter.
var ErrNoQueueStats = errors.New("no per-queue packet counters in the ethtool statistics")

// Bounds on a driver's string table and on queue indexes (16 bits).
const (
	maxEthtoolStrings = 1 << 16
	maxQueueID        = 1<<16 - 1
)

// ethtoolRule is one naming of per-queue counters. Each format has one
// %u, the queue index, and may have a %*u whose counters are summed into
// the queue; several formats of one kind are disjoint parts, summed.
type ethtoolRule struct {
	rxPackets, rxBytes, txPackets, txBytes []string
	// denseTX renumbers TX queues 0..n-1 (bnxt_en counts by ring).
	denseTX bool
}

// ethtoolRules are tried in order; the first whose packets occur wins.
var ethtoolRules = []ethtoolRule{
	// virtio_net to 6.8, ice, ixgbe, igb.
	mirrored([]string{"rx_queue_%u_packets"}, []string{"rx_queue_%u_bytes"}),
	mirrored([]string{"rx%u_packets"}, []string{"rx%u_bytes"}),           // mlx5, virtio_net 6.9
	mirrored([]string{"rx-%u.packets"}, []string{"rx-%u.bytes"}),         // i40e since 4.17, iavf
	mirrored([]string{"rx-%u.rx_packets"}, []string{"rx-%u.rx_bytes"}),   // sfc, i40e before 4.17
	mirrored([]string{"rx_%u_packets"}, []string{"rx_%u_bytes"}),         // mana
	mirrored([]string{"rx_%u_pkts"}, []string{"rx_%u_bytes"}),            // ionic
	mirrored([]string{"queue_%u_rx_cnt"}, []string{"queue_%u_rx_bytes"}), // ena
	mirrored([]string{"rxq%u_packets"}, []string{"rxq%u_bytes"}),         // hns3 since 5.0
	mirrored([]string{"rcb_q%u_rx_pkts"}, []string{"rcb_q%u_rx_bytes"}),  // hns3 in 4.19
	mirrored([]string{"rx_q-%u_pkts"}, []string{"rx_q-%u_bytes"}),        // idpf
	mirrored([]string{"rxq_%u_pkts"}, []string{"rxq_%u_bytes"}),          // nfp
	// bnxt_en (bnxt_get_strings): unicast, multicast and broadcast.
	func() ethtoolRule {
		r := mirrored([]string{"[%u]: rx_ucast_packets", "[%u]: rx_mcast_packets", "[%u]: rx_bcast_packets"},
			[]string{"[%u]: rx_ucast_bytes", "[%u]: rx_mcast_bytes", "[%u]: rx_bcast_bytes"})
		r.denseTX = true
		return r
	}(),
	// qede (qede_get_strings_stats_rxq, _txq with traffic class). No bytes.
	{rxPackets: []string{"%u: rcv_pkts"}, txPackets: []string{"%u_%*u: xmit_pkts"}},
}

// mirrored is the rule of rx formats and their "tx" spellings.
func mirrored(packets, bytes []string) ethtoolRule {
	tx := func(fs []string) []string {
		out := make([]string, len(fs))
		for i, f := range fs {
			out[i] = strings.ReplaceAll(f, "rx", "tx")
		}
		return out
	}
	return ethtoolRule{rxPackets: packets, rxBytes: bytes, txPackets: tx(packets), txBytes: tx(bytes)}
}

// parseQueueStats turns an ETH_SS_STATS table into per-queue counters
// (Ifindex 0) by type then ID, and the matching rule's first format.
// Sums wrap like the kernel's counters; a name twice is an error.
func parseQueueStats(names []string, values []uint64) ([]Stats, string, error) {
	if len(names) != len(values) {
		return nil, "", fmt.Errorf("%d stat names but %d values", len(names), len(values))
	}
	if len(names) > maxEthtoolStrings {
		return nil, "", fmt.Errorf("%d stats, more than the %d read", len(names), maxEthtoolStrings)
	}
	for _, r := range ethtoolRules {
		stats, ok, err := r.apply(names, values)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", r.rxPackets[0], err)
		}
		if ok {
			return stats, r.rxPackets[0], nil
		}
	}
	return nil, "", ErrNoQueueStats
}

type queueKey struct {
	typ QueueType
	id  int
}

type queueSum struct {
	packets, bytes       uint64
	hasPackets, hasBytes bool
}

// apply reads the rule's counters; ok is false when it has no packets.
func (r ethtoolRule) apply(names []string, values []uint64) ([]Stats, bool, error) {
	kinds := []struct {
		typ     QueueType
		packets bool
		formats []string
	}{
		{QueueRX, true, r.rxPackets}, {QueueRX, false, r.rxBytes},
		{QueueTX, true, r.txPackets}, {QueueTX, false, r.txBytes},
	}
	sums := map[queueKey]queueSum{}
	seen := map[string]bool{}
	anyPackets := false
	for i, name := range names {
		for _, k := range kinds {
			for _, f := range k.formats {
				id, ok := matchFormat(f, name)
				if !ok {
					continue
				}
				if seen[name] {
					return nil, false, fmt.Errorf("counter %q appears twice", name)
				}
				seen[name] = true
				key := queueKey{k.typ, id}
				s := sums[key]
				if k.packets {
					s.packets, s.hasPackets, anyPackets = s.packets+values[i], true, true
				} else {
					s.bytes, s.hasBytes = s.bytes+values[i], true
				}
				sums[key] = s
			}
		}
	}
	if !anyPackets {
		return nil, false, nil
	}
	stats := make([]Stats, 0, len(sums))
	for key, s := range sums {
		if !s.hasPackets {
			return nil, false, fmt.Errorf("%s queue %d has a bytes counter but no packets counter", key.typ, key.id)
		}
		stats = append(stats, Stats{Type: key.typ, ID: key.id, Packets: s.packets, Bytes: s.bytes})
	}
	slices.SortFunc(stats, func(a, b Stats) int { return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.ID, b.ID)) })
	if r.denseTX {
		n := 0
		for i := range stats {
			if stats[i].Type == QueueTX {
				stats[i].ID = n
				n++
			}
		}
	}
	return stats, true, nil
}

// matchFormat reports whether name is format with each %u and %*u a
// canonical decimal up to maxQueueID, and returns the %u one.
func matchFormat(format, name string) (int, bool) {
	id, n := -1, 0
	for f := 0; f < len(format); {
		verb := ""
		switch {
		case len(format)-f >= 2 && format[f:f+2] == "%u":
			verb = "%u"
		case len(format)-f >= 3 && format[f:f+3] == "%*u":
			verb = "%*u"
		}
		if verb == "" {
			if n >= len(name) || name[n] != format[f] {
				return 0, false
			}
			f++
			n++
			continue
		}
		v, width, ok := parseIndex(name[n:])
		if !ok {
			return 0, false
		}
		if verb == "%u" {
			id = v
		}
		f += len(verb)
		n += width
	}
	return id, n == len(name) && id >= 0
}

// parseIndex reads the decimal number at the start of s.
func parseIndex(s string) (v, width int, ok bool) {
	for width < len(s) && s[width] >= '0' && s[width] <= '9' {
		v = v*10 + int(s[width]-'0')
		width++
		if v > maxQueueID {
			return 0, 0, false
		}
	}
	if width == 0 || (width > 1 && s[0] == '0') {
		return 0, 0, false
	}
	return v, width, true
}
