package main

import "testing"

func TestLoadSources(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"      1 \"load_source\":\"qstats\"\n", "qstats"},
		{"      2 \"load_source\":\"ethtool\"\n      1 \"load_source\":\"interrupts\"\n", "ethtool x2, interrupts"},
		{"", ""},
		{"garbage\n", ""},
	} {
		if got := loadSources(tt.in); got != tt.want {
			t.Errorf("loadSources(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
