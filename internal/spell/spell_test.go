package spell

import (
	"strings"
	"testing"
)

// TestNearest: a typo gets the name it was meant to be, and only a
// close one does: a word far from every name, or too long to be a
// typo, gets none.
func TestNearest(t *testing.T) {
	policyNames := []string{"auto", "numa-hop", "linear", "pinned", "ignore"}
	keys := []string{"banned_cpus", "exclude_isolated", "exclude_nohz_full", "listen", "devices"}
	for _, tc := range []struct {
		s     string
		cands []string
		want  string
	}{
		{"numa_hop", policyNames, "numa-hop"},
		{"NUMA-HOP", policyNames, "numa-hop"},
		{"lienar", policyNames, "linear"}, // a swap is one edit
		{"pined", policyNames, "pinned"},
		{"spread", policyNames, ""},
		{"ab", policyNames, ""}, // 2 edits from "auto", half of it
		{"banned_cpu", keys, "banned_cpus"},
		{"bannedcpus", keys, "banned_cpus"},
		{"exclude_isolate", keys, "exclude_isolated"},
		{"colour", keys, ""},
		{"rn", []string{"run", "plan"}, "run"}, // commands: short, one edit
		{"relaod", []string{"run", "reload"}, "reload"},
		{strings.Repeat("banned_cpus", 10), keys, ""},
	} {
		if got := Nearest(tc.s, tc.cands); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
	for a, b := range map[string]string{"": "abc", "ture": "true", "kitten": "sitting", "ca": "abc"} {
		want := map[string]int{"": 3, "ture": 1, "kitten": 3, "ca": 3}[a]
		if got := editDistance(a, b); got != want || editDistance(b, a) != want {
			t.Errorf("editDistance(%q, %q) = %d, want %d both ways", a, b, got, want)
		}
	}
}
