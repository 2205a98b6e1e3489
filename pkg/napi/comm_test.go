//go:build linux

package napi

import "testing"

func TestMatchComm(t *testing.T) {
	for _, c := range []struct {
		comm, iface string
		id          int
		ok          bool
	}{
		{"napi/eth0-8193", "eth0", 8193, true},
		{"napi/eth0-0", "eth0", 0, true},               // a TX-only NAPI
		{"napi/eth0-8193", "eth1", 0, false},           // another device
		{"napi/eth10-8193", "eth1", 0, false},          // a longer name that starts the same
		{"napi/eth0-81x3", "eth0", 0, false},           // not a number
		{"napi/eth0-", "eth0", 0, false},               // no id, and not cut
		{"napi/enp1s0-819", "enp1s0", -1, true},        // cut inside the id
		{"napi/enp129s0f0", "enp129s0f0np0", -1, true}, // cut inside the name
		{"napi/enp129s0f0", "enp129s0f0", -1, true},    // cut on the dash
		{"napi/enp129s0f0", "enp129s0f1", 0, false},
		{"napi/enp129s0f", "enp129s0f0", 0, false},   // 14 bytes: not cut
		{"napi/enp65s0-8193", "enp65s0", 8193, true}, // a kthread's full name (5.17+)
		{"napi/enp129s0f0np0-8193", "enp129s0f0np0", 8193, true},
		{"napi/enp129s0f0np0-8193", "enp129s0f0", 0, false},
		{"kworker/0:1", "eth0", 0, false},
		{"napi/eth0-1", "", 0, false},
	} {
		id, ok := matchComm(c.comm, c.iface)
		if ok != c.ok || (ok && id != c.id) {
			t.Errorf("matchComm(%q, %q) = %d, %v; want %d, %v", c.comm, c.iface, id, ok, c.id, c.ok)
		}
	}
}
