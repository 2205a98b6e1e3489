package netdev

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// kv is one line of `ethtool -S`.
type kv struct {
	name  string
	value uint64
}

func split(lines []kv) ([]string, []uint64) {
	names := make([]string, len(lines))
	values := make([]uint64, len(lines))
	for i, l := range lines {
		names[i], values[i] = l.name, l.value
	}
	return names, values
}

func rx(id int, packets, bytes uint64) Stats {
	return Stats{Type: QueueRX, ID: id, Packets: packets, Bytes: bytes}
}

func tx(id int, packets, bytes uint64) Stats {
	return Stats{Type: QueueTX, ID: id, Packets: packets, Bytes: bytes}
}

// TestParseQueueStatsDrivers feeds each driver's table, in the order and with
// the names its get_strings prints (file and function cited), and expects
// that driver's per-queue counters.
func TestParseQueueStatsDrivers(t *testing.T) {
	tests := []struct {
		driver string // and where its names come from
		lines  []kv
		want   []Stats
		rule   string
	}{{
		driver: "virtio_net 6.1: drivers/net/virtio_net.c virtnet_get_strings, rx_queue_%u_%s over virtnet_rq_stats_desc",
		lines: []kv{
			{"rx_queue_0_packets", 10}, {"rx_queue_0_bytes", 1000}, {"rx_queue_0_drops", 1},
			{"rx_queue_0_xdp_packets", 0}, {"rx_queue_0_xdp_tx", 0}, {"rx_queue_0_xdp_redirects", 0},
			{"rx_queue_0_xdp_drops", 0}, {"rx_queue_0_kicks", 5},
			{"rx_queue_1_packets", 20}, {"rx_queue_1_bytes", 2000}, {"rx_queue_1_drops", 0},
			{"rx_queue_1_xdp_packets", 0}, {"rx_queue_1_xdp_tx", 0}, {"rx_queue_1_xdp_redirects", 0},
			{"rx_queue_1_xdp_drops", 0}, {"rx_queue_1_kicks", 7},
			{"tx_queue_0_packets", 30}, {"tx_queue_0_bytes", 3000}, {"tx_queue_0_xdp_tx", 0},
			{"tx_queue_0_xdp_tx_drops", 0}, {"tx_queue_0_kicks", 30}, {"tx_queue_0_tx_timeouts", 0},
			{"tx_queue_1_packets", 40}, {"tx_queue_1_bytes", 4000}, {"tx_queue_1_xdp_tx", 0},
			{"tx_queue_1_xdp_tx_drops", 0}, {"tx_queue_1_kicks", 40}, {"tx_queue_1_tx_timeouts", 0},
		},
		want: []Stats{rx(0, 10, 1000), rx(1, 20, 2000), tx(0, 30, 3000), tx(1, 40, 4000)},
		rule: "rx_queue_%u_packets",
	}, {
		driver: "virtio_net 6.9: virtnet_get_strings after the rename to rx%u_%s (hw stats rx%u_hw_%s)",
		lines: []kv{
			{"rx0_packets", 11}, {"rx0_bytes", 1100}, {"rx0_drops", 0}, {"rx0_kicks", 3},
			{"rx0_hw_packets", 99}, {"rx0_hw_bytes", 9900},
			{"tx0_packets", 12}, {"tx0_bytes", 1200}, {"tx0_kicks", 12}, {"tx0_hw_packets", 98},
		},
		want: []Stats{rx(0, 11, 1100), tx(0, 12, 1200)},
		rule: "rx%u_packets",
	}, {
		driver: "ifb: drivers/net/ifb.c ifb_get_strings, rx_queue_%u_%s (read on this host)",
		lines: []kv{
			{"rx_queue_0_packets", 5}, {"rx_queue_0_bytes", 500}, {"tx_queue_0_packets", 6},
			{"tx_queue_0_bytes", 600}, {"tx_queue_0_timeouts", 0},
		},
		want: []Stats{rx(0, 5, 500), tx(0, 6, 600)},
		rule: "rx_queue_%u_packets",
	}, {
		driver: "mlx5: en_stats.c mlx5e_grp_channels_fill_strings (rq_stats_desc rx%d_*, sq_stats_desc tx%d_*, xsk and ptp rings apart)",
		lines: []kv{
			{"rx_packets", 300}, {"rx_bytes", 30000}, {"tx_packets", 70}, {"ptp_rq0_packets", 9},
			{"ch0_events", 100}, {"ch1_events", 100},
			{"rx0_packets", 100}, {"rx0_bytes", 10000}, {"rx0_csum_complete", 100}, {"rx0_xdp_drop", 0},
			{"rx1_packets", 200}, {"rx1_bytes", 20000}, {"rx1_csum_complete", 200}, {"rx1_xdp_drop", 0},
			{"rx0_xsk_packets", 7}, {"rx0_xsk_bytes", 700},
			{"tx0_packets", 30}, {"tx0_bytes", 3000}, {"tx0_nop", 1},
			{"tx1_packets", 40}, {"tx1_bytes", 4000}, {"tx1_nop", 1},
			{"tx0_xdp_xmit", 0}, {"tx0_xsk_xmit", 2},
		},
		want: []Stats{rx(0, 100, 10000), rx(1, 200, 20000), tx(0, 30, 3000), tx(1, 40, 4000)},
		rule: "rx%u_packets",
	}, {
		driver: "ice: ice_ethtool.c __ice_get_strings, tx queues then rx queues",
		lines: []kv{
			{"rx_unicast", 9}, {"tx_unicast", 9}, {"rx_bytes.nic", 1},
			{"tx_queue_0_packets", 1}, {"tx_queue_0_bytes", 64}, {"tx_queue_1_packets", 2}, {"tx_queue_1_bytes", 128},
			{"rx_queue_0_packets", 3}, {"rx_queue_0_bytes", 192}, {"rx_queue_1_packets", 4}, {"rx_queue_1_bytes", 256},
			{"tx_priority_0_xon.nic", 0}, {"rx_priority_0_xoff.nic", 0},
		},
		want: []Stats{rx(0, 3, 192), rx(1, 4, 256), tx(0, 1, 64), tx(1, 2, 128)},
		rule: "rx_queue_%u_packets",
	}, {
		driver: "ixgbe: ixgbe_ethtool.c ixgbe_get_strings",
		lines: []kv{
			{"rx_packets", 7}, {"tx_queue_0_packets", 5}, {"tx_queue_0_bytes", 50},
			{"rx_queue_0_packets", 7}, {"rx_queue_0_bytes", 70}, {"tx_pb_0_pxon", 0}, {"rx_pb_0_pxoff", 0},
		},
		want: []Stats{rx(0, 7, 70), tx(0, 5, 50)},
		rule: "rx_queue_%u_packets",
	}, {
		driver: "igb: igb_ethtool.c igb_get_strings",
		lines: []kv{
			{"tx_queue_0_packets", 8}, {"tx_queue_0_bytes", 80}, {"tx_queue_0_restart", 0},
			{"rx_queue_0_packets", 9}, {"rx_queue_0_bytes", 90}, {"rx_queue_0_drops", 0},
			{"rx_queue_0_csum_err", 0}, {"rx_queue_0_alloc_failed", 0},
		},
		want: []Stats{rx(0, 9, 90), tx(0, 8, 80)},
		rule: "rx_queue_%u_packets",
	}, {
		driver: "i40e: i40e_ethtool.c i40e_get_stat_strings, i40e_gstrings_queue_stats %s-%u.packets",
		lines: []kv{
			{"rx_packets", 3}, {"tx-0.packets", 1}, {"tx-0.bytes", 10}, {"rx-0.packets", 2}, {"rx-0.bytes", 20},
			{"tx-1.packets", 3}, {"tx-1.bytes", 30}, {"rx-1.packets", 4}, {"rx-1.bytes", 40},
			{"veb.tc_0_rx_packets", 6}, {"port.rx_priority_0_xon_rx", 0},
		},
		want: []Stats{rx(0, 2, 20), rx(1, 4, 40), tx(0, 1, 10), tx(1, 3, 30)},
		rule: "rx-%u.packets",
	}, {
		driver: "iavf: iavf_ethtool.c iavf_get_stat_strings",
		lines:  []kv{{"rx_bytes", 1}, {"tx-0.packets", 5}, {"tx-0.bytes", 50}, {"rx-0.packets", 6}, {"rx-0.bytes", 60}},
		want:   []Stats{rx(0, 6, 60), tx(0, 5, 50)},
		rule:   "rx-%u.packets",
	}, {
		driver: "sfc: ethtool_common.c efx_describe_per_queue_stats (packets only)",
		lines: []kv{
			{"rx_packets", 3}, {"tx-0.tx_packets", 1}, {"tx-1.tx_packets", 2},
			{"rx-0.rx_packets", 3}, {"rx-1.rx_packets", 4},
		},
		want: []Stats{rx(0, 3, 0), rx(1, 4, 0), tx(0, 1, 0), tx(1, 2, 0)},
		rule: "rx-%u.rx_packets",
	}, {
		driver: "mana: mana_ethtool.c mana_get_strings",
		lines: []kv{
			{"stop_queue", 0}, {"rx_0_packets", 1}, {"rx_0_bytes", 10}, {"rx_0_xdp_drop", 0},
			{"rx_0_xdp_tx", 0}, {"rx_0_xdp_redirect", 0},
			{"tx_0_packets", 2}, {"tx_0_bytes", 20}, {"tx_0_xdp_xmit", 0}, {"tx_0_tso_packets", 1},
			{"tx_0_tso_bytes", 9}, {"tx_0_csum_partial", 2},
		},
		want: []Stats{rx(0, 1, 10), tx(0, 2, 20)},
		rule: "rx_%u_packets",
	}, {
		driver: "ionic: ionic_stats.c ionic_sw_stats_get_tx_strings/_rx_strings, tx_%d_%s",
		lines: []kv{
			{"rx_packets", 1}, {"tx_0_pkts", 4}, {"tx_0_bytes", 40}, {"tx_0_clean", 4},
			{"rx_0_pkts", 5}, {"rx_0_bytes", 50}, {"rx_0_dma_map_err", 0},
		},
		want: []Stats{rx(0, 5, 50), tx(0, 4, 40)},
		rule: "rx_%u_pkts",
	}, {
		driver: "ena: ena_ethtool.c ena_queue_strings, queue_%u_%s_%s",
		lines: []kv{
			{"tx_timeout", 0}, {"queue_0_tx_cnt", 7}, {"queue_0_tx_bytes", 70}, {"queue_0_tx_queue_stop", 0},
			{"queue_0_rx_cnt", 8}, {"queue_0_rx_bytes", 80}, {"queue_0_rx_rx_copybreak_pkt", 1},
			{"queue_1_tx_cnt", 9}, {"queue_1_tx_bytes", 90}, {"queue_1_rx_cnt", 10}, {"queue_1_rx_bytes", 100},
		},
		want: []Stats{rx(0, 8, 80), rx(1, 10, 100), tx(0, 7, 70), tx(1, 9, 90)},
		rule: "queue_%u_rx_cnt",
	}, {
		driver: "hns3: hns3_ethtool.c hns3_get_strings_tqps (txq%u_/rxq%u_ + hns3_txq_stats), hclge's txq%u_pktnum_rcd apart",
		lines: []kv{
			{"txq0_dropped", 0}, {"txq0_seg_pkt_cnt", 0}, {"txq0_packets", 3}, {"txq0_bytes", 30}, {"txq0_more", 0},
			{"rxq0_dropped", 0}, {"rxq0_seg_pkt_cnt", 0}, {"rxq0_packets", 4}, {"rxq0_bytes", 40},
			{"mac_tx_mac_pause_num", 0}, {"txq0_pktnum_rcd", 3}, {"rxq0_pktnum_rcd", 4},
		},
		want: []Stats{rx(0, 4, 40), tx(0, 3, 30)},
		rule: "rxq%u_packets",
	}, {
		driver: "hns3 4.19: hns3_ethtool.c hns3_update_strings, rcb_q%d_",
		lines: []kv{
			{"rcb_q0_tx_pkts", 1}, {"rcb_q0_tx_bytes", 10}, {"rcb_q0_rx_pkts", 2}, {"rcb_q0_rx_bytes", 20},
		},
		want: []Stats{rx(0, 2, 20), tx(0, 1, 10)},
		rule: "rcb_q%u_rx_pkts",
	}, {
		driver: "idpf: idpf_ethtool.c idpf_add_qstat_strings, %s_q-%u_%s",
		lines: []kv{
			{"rx_bytes", 1}, {"tx_q-0_pkts", 6}, {"tx_q-0_bytes", 60}, {"tx_q-0_lso_pkts", 1},
			{"rx_q-0_pkts", 7}, {"rx_q-0_bytes", 70}, {"rx_q-0_rsc_pkts", 0},
		},
		want: []Stats{rx(0, 7, 70), tx(0, 6, 60)},
		rule: "rx_q-%u_pkts",
	}, {
		driver: "nfp: nfp_net_ethtool.c nfp_vnic_get_sw_stats_strings (rvec_, not summed) and nfp_vnic_get_hw_stats_strings",
		lines: []kv{
			{"rvec_0_rx_pkts", 5}, {"rvec_0_tx_pkts", 6}, {"rvec_0_tx_busy", 0},
			{"txq_0_pkts", 6}, {"txq_0_bytes", 60}, {"rxq_0_pkts", 5}, {"rxq_0_bytes", 50},
		},
		want: []Stats{rx(0, 5, 50), tx(0, 6, 60)},
		rule: "rxq_%u_pkts",
	}, {
		driver: "bnxt_en: bnxt_ethtool.c bnxt_get_strings, [%d]: %s over bnxt_ring_rx_stats_str (combined rings)",
		lines: []kv{
			{"[0]: rx_ucast_packets", 10}, {"[0]: rx_mcast_packets", 2}, {"[0]: rx_bcast_packets", 1},
			{"[0]: rx_discards", 0}, {"[0]: rx_errors", 0},
			{"[0]: rx_ucast_bytes", 1000}, {"[0]: rx_mcast_bytes", 200}, {"[0]: rx_bcast_bytes", 100},
			{"[0]: tx_ucast_packets", 5}, {"[0]: tx_mcast_packets", 0}, {"[0]: tx_bcast_packets", 1},
			{"[0]: tx_ucast_bytes", 500}, {"[0]: tx_mcast_bytes", 0}, {"[0]: tx_bcast_bytes", 60},
			{"[1]: rx_ucast_packets", 1}, {"[1]: rx_mcast_packets", 0}, {"[1]: rx_bcast_packets", 0},
			{"[1]: rx_ucast_bytes", 100}, {"[1]: rx_mcast_bytes", 0}, {"[1]: rx_bcast_bytes", 0},
			{"[1]: tx_ucast_packets", 1}, {"[1]: tx_mcast_packets", 0}, {"[1]: tx_bcast_packets", 0},
			{"[1]: tx_ucast_bytes", 100}, {"[1]: tx_mcast_bytes", 0}, {"[1]: tx_bcast_bytes", 0},
			{"rxp_ucast_frames", 3},
		},
		want: []Stats{rx(0, 13, 1300), rx(1, 1, 100), tx(0, 6, 560), tx(1, 1, 100)},
		rule: "[%u]: rx_ucast_packets",
	}, {
		driver: "bnxt_en with separate rx and tx rings: tx rings follow the rx rings and are renumbered from 0",
		lines: []kv{
			{"[0]: rx_ucast_packets", 1}, {"[1]: rx_ucast_packets", 2},
			{"[2]: tx_ucast_packets", 3}, {"[3]: tx_ucast_packets", 4},
		},
		want: []Stats{rx(0, 1, 0), rx(1, 2, 0), tx(0, 3, 0), tx(1, 4, 0)},
		rule: "[%u]: rx_ucast_packets",
	}, {
		driver: "qede: qede_ethtool.c qede_get_strings_stats_rxq (%d: %s) and _txq (%d_%d: %s, traffic classes summed)",
		lines: []kv{
			{"0: rcv_pkts", 10}, {"0: rx_hw_errors", 0}, {"0: rx_alloc_errors", 0},
			{"0_0: xmit_pkts", 3}, {"0_0: xmit_stopped", 0}, {"0_1: xmit_pkts", 4},
			{"1: rcv_pkts", 11}, {"1_0: xmit_pkts", 5}, {"2 [XDP]: xmit_pkts", 99},
			{"rx_ucast_pkts", 9},
		},
		want: []Stats{rx(0, 10, 0), rx(1, 11, 0), tx(0, 7, 0), tx(1, 5, 0)},
		rule: "%u: rcv_pkts",
	}}
	for _, tc := range tests {
		t.Run(strings.Fields(tc.driver)[0], func(t *testing.T) {
			names, values := split(tc.lines)
			got, rule, err := parseQueueStats(names, values)
			if err != nil {
				t.Fatalf("%s: %v", tc.driver, err)
			}
			if rule != tc.rule {
				t.Errorf("%s: rule %q, want %q", tc.driver, rule, tc.rule)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s:\n got %v\nwant %v", tc.driver, got, tc.want)
			}
		})
	}
}

// TestParseQueueStatsNone: tables of drivers without per-queue packet
// counters in their names.
func TestParseQueueStatsNone(t *testing.T) {
	tests := map[string][]kv{
		// drivers/net/virtio_net.c from 6.10 on ("virtio-net: support queue
		// stat": packets and bytes went to netlink qstats); 6.12 and this
		// host's 6.18 print these.
		"virtio_net 6.12": {
			{"rx_drops", 0}, {"rx_xdp_packets", 0}, {"rx_kicks", 5149}, {"tx_kicks", 17320},
			{"rx0_drops", 0}, {"rx0_xdp_packets", 0}, {"rx0_xdp_tx", 0}, {"rx0_xdp_redirects", 0},
			{"rx0_xdp_drops", 0}, {"rx0_kicks", 5149}, {"tx0_xdp_tx", 0}, {"tx0_xdp_tx_drops", 0},
			{"tx0_kicks", 17320}, {"tx0_tx_timeouts", 0},
		},
		// gve_ethtool.c gve_get_strings: per ring only descriptors and
		// bytes; a descriptor is not a packet (DQO, header split).
		"gve": {
			{"rx_packets", 9}, {"tx_packets", 9}, {"rx_posted_desc[0]", 5}, {"rx_completed_desc[0]", 4},
			{"rx_bytes[0]", 400}, {"tx_posted_desc[0]", 5}, {"tx_completed_desc[0]", 5}, {"tx_bytes[0]", 500},
		},
		// veth_get_strings: only XDP counters per queue.
		"veth":  {{"peer_ifindex", 4}, {"rx_queue_0_xdp_packets", 0}, {"rx_queue_0_xdp_bytes", 0}},
		"empty": {},
		// Indices with leading zeros, signs or past maxQueueID are no index.
		"bad indices": {
			{"rx_queue_01_packets", 1}, {"rx_queue_-1_packets", 1}, {"rx_queue_+1_packets", 1},
			{"rx_queue_65536_packets", 1}, {"rx_queue__packets", 1}, {"rx_queue_99999999999999999999_packets", 1},
		},
	}
	for name, lines := range tests {
		names, values := split(lines)
		got, rule, err := parseQueueStats(names, values)
		if !errors.Is(err, ErrNoQueueStats) {
			t.Errorf("%s: got %v, %q, %v; want ErrNoQueueStats", name, got, rule, err)
		}
	}
}

func TestParseQueueStatsMalformed(t *testing.T) {
	long := make([]string, maxEthtoolStrings+1)
	tests := []struct {
		name   string
		names  []string
		values []uint64
		want   string
	}{
		{"more names than values", []string{"rx_queue_0_packets", "x"}, []uint64{1}, "2 stat names but 1 values"},
		{"fewer names than values", []string{"rx_queue_0_packets"}, []uint64{1, 2}, "1 stat names but 2 values"},
		{"too many", long, make([]uint64, len(long)), "more than the 65536 read"},
		{"duplicate", []string{"rx_queue_0_packets", "rx_queue_0_packets"}, []uint64{1, 2}, `"rx_queue_0_packets" appears twice`},
		{"bytes without packets", []string{"rx_queue_0_packets", "tx_queue_3_bytes"}, []uint64{1, 2}, "tx queue 3 has a bytes counter but no packets counter"},
	}
	for _, tc := range tests {
		got, _, err := parseQueueStats(tc.names, tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrNoQueueStats) {
			t.Errorf("%s: got %v, %v; want an error with %q", tc.name, got, err, tc.want)
		}
	}
}

// TestParseQueueStatsLimits: the largest index is read, sums wrap like the
// kernel's counters.
func TestParseQueueStatsLimits(t *testing.T) {
	names := []string{"[65535]: rx_ucast_packets", "[65535]: rx_mcast_packets"}
	got, _, err := parseQueueStats(names, []uint64{1<<64 - 1, 2})
	want := []Stats{rx(65535, 1, 0)}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
}

// TestEthtoolRulesWellFormed: every format has exactly one %u, so that
// matchFormat returns a queue index for it, and each rule names packets.
func TestEthtoolRulesWellFormed(t *testing.T) {
	for _, r := range ethtoolRules {
		if len(r.rxPackets) == 0 && len(r.txPackets) == 0 {
			t.Errorf("rule %v names no packets", r)
		}
		for _, fs := range [][]string{r.rxPackets, r.rxBytes, r.txPackets, r.txBytes} {
			for _, f := range fs {
				if strings.Count(f, "%u") != 1 {
					t.Errorf("format %q: want one %%u", f)
				}
				name := strings.ReplaceAll(strings.ReplaceAll(f, "%*u", "3"), "%u", "12")
				if id, ok := matchFormat(f, name); !ok || id != 12 {
					t.Errorf("matchFormat(%q, %q) = %d, %v", f, name, id, ok)
				}
			}
		}
	}
}

func FuzzParseQueueStats(f *testing.F) {
	f.Add("rx_queue_0_packets\nrx_queue_0_bytes\ntx_queue_0_packets", uint64(7))
	f.Add("[0]: rx_ucast_packets\n[0]: rx_mcast_packets\n[2]: tx_ucast_packets", uint64(1<<63))
	f.Add("0_1: xmit_pkts\n0: rcv_pkts\n0_0: xmit_pkts", uint64(3))
	f.Add("rx0_packets\nrx0_packets", uint64(0))
	f.Add("txq1_bytes\nrxq1_packets", uint64(1))
	f.Fuzz(func(t *testing.T, table string, seed uint64) {
		names := strings.Split(table, "\n")
		values := make([]uint64, len(names))
		for i := range values {
			values[i] = seed * uint64(i+1)
		}
		stats, rule, err := parseQueueStats(names, values)
		if err != nil {
			if stats != nil || rule != "" {
				t.Fatalf("error %v with stats %v, rule %q", err, stats, rule)
			}
			return
		}
		if rule == "" || len(stats) == 0 {
			t.Fatalf("no error but rule %q, %d stats", rule, len(stats))
		}
		seen := map[string]bool{}
		for i, s := range stats {
			key := fmt.Sprint(s.Type, s.ID)
			if seen[key] || s.ID < 0 || s.ID > maxQueueID || s.Type > QueueTX {
				t.Fatalf("bad or repeated queue %+v in %v", s, stats)
			}
			seen[key] = true
			if i > 0 && (stats[i-1].Type > s.Type || stats[i-1].Type == s.Type && stats[i-1].ID >= s.ID) {
				t.Fatalf("not sorted: %v", stats)
			}
		}
	})
}
