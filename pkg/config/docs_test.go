package config

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestManualKeys checks docs/configuration.md against the parser: its
// key table lists every top-level key (load_balance's as
// load_balance.KEY) and its rule table every rule key (match's as
// match.KEY), and no key the parser does not accept.
func TestManualKeys(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	var top, rule []string
	for _, k := range topKeys {
		if k != "load_balance" {
			top = append(top, k)
		}
	}
	for _, k := range loadKeys {
		top = append(top, "load_balance."+k)
	}
	for _, k := range ruleKeys {
		if k != "match" {
			rule = append(rule, k)
		}
	}
	for _, k := range matchKeys {
		rule = append(rule, "match."+k)
	}
	for _, tc := range []struct {
		header string
		want   []string
	}{
		{"| key | default | meaning |", top},
		{"| rule key | meaning |", rule},
	} {
		got := firstColumn(t, page, tc.header)
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tc.want))
		for _, k := range want {
			if !slices.Contains(got, k) {
				t.Errorf("docs/configuration.md %s: no row for %s", tc.header, k)
			}
		}
		for _, k := range got {
			if !slices.Contains(want, k) {
				t.Errorf("docs/configuration.md %s: %s is not a key the parser accepts", tc.header, k)
			}
		}
	}
}

// firstColumn returns the first cell of each row of the table under
// header, its backquotes cut.
func firstColumn(t *testing.T, page, header string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(page, "\n"+header+"\n|---")
	if !ok {
		t.Fatalf("docs/configuration.md: no table %q", header)
	}
	var keys []string
	for _, l := range strings.Split(rest, "\n")[1:] {
		if !strings.HasPrefix(l, "| ") {
			break
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(l, "| "), " |")
		keys = append(keys, strings.Trim(cell, "`"))
	}
	if len(keys) == 0 {
		t.Fatalf("docs/configuration.md: table %q has no rows", header)
	}
	return keys
}
