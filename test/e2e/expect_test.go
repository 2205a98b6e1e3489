//go:build e2e

package e2e

import (
	"slices"
	"testing"
)

// Tests of the host-side expectations; they boot nothing.

func TestNetPlacement(t *testing.T) {
	four, mana := FourNodeGuest(), MANAGuest()
	for _, tc := range []struct {
		name    string
		g       Guest
		allowed []int
		policy  string
		queues  []int
		control string
	}{
		{"numa4 all online", four, allCPUs(8), "numa-hop", []int{4, 5, 6, 7, 0, 1}, "4-5"},
		{"numa4 cpu5 offline", four, without(allCPUs(8), 5), "numa-hop", []int{4, 6, 7, 0, 1, 2}, "4"},
		{"numa4 cpu4 banned", four, without(allCPUs(8), 4), "numa-hop", []int{5, 6, 7, 0, 1, 2}, "5"},
		// docs/placement.md: 6 pairs with CPUs 4-5 banned (6 allowed) -> linear.
		{"numa4 node2 banned", four, without(allCPUs(8), 4, 5), "linear", []int{0, 1, 2, 3, 6, 7}, "6-7"},
		{"mana", mana, allCPUs(4), "linear", []int{0, 1, 2, 3, 0, 1, 2, 3}, "2-3"},
	} {
		p := tc.g.NetPlacement(0, tc.allowed)
		if p.Policy != tc.policy || !slices.Equal(p.Queues, tc.queues) || p.ControlList() != tc.control {
			t.Errorf("%s: %+v (control %s), want %s %v control %s", tc.name, p, p.ControlList(), tc.policy, tc.queues, tc.control)
		}
	}
	if got := four.NetPlacement(0, without(allCPUs(8), 5)).QueueArg(); got != "4 6 7 0 1 2" {
		t.Errorf("QueueArg = %q", got)
	}
}

func TestParseProm(t *testing.T) {
	text := `# HELP numairqd_irqs IRQs.
# TYPE numairqd_irqs gauge
numairqd_irqs{device="0000:41:00.0",policy="numa-hop",state="placed"} 13
numairqd_irqs{device="0000:21:00.0",policy="linear",state="managed"} 8
numairqd_rounds_total{trigger="startup"} 1
numairqd_state_generation 7
numairqd_build_info{goversion="go1.26.8",revision="a\"b"} 1
numairqd_round_duration_seconds_sum 0.25
broken{a="x" 1
`
	m := parseProm(text)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"numairqd_irqs", map[string]string{"device": "0000:41:00.0", "state": "placed"}, 13},
		{"numairqd_irqs", map[string]string{"state": "managed"}, 8},
		{"numairqd_rounds_total", map[string]string{"trigger": "startup"}, 1},
		{"numairqd_state_generation", nil, 7},
		{"numairqd_build_info", map[string]string{"revision": `a"b`}, 1},
		{"numairqd_round_duration_seconds_sum", nil, 0.25},
	} {
		if v, ok := promValue(m, tc.name, tc.labels); !ok || v != tc.want {
			t.Errorf("%s%v = %v, %v; want %v", tc.name, tc.labels, v, ok, tc.want)
		}
	}
	if len(promFind(m, "broken", nil)) != 0 {
		t.Error("a line with unterminated labels was read")
	}
}
