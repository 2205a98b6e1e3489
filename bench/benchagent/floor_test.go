//go:build linux

package main

import "testing"

func TestCPUEvent(t *testing.T) {
	for _, tt := range []struct {
		msg  string
		want bool
	}{
		{"offline@/devices/system/cpu/cpu5\x00ACTION=offline\x00DEVPATH=/devices/system/cpu/cpu5\x00SUBSYSTEM=cpu\x00SEQNUM=1201\x00", true},
		{"online@/devices/system/cpu/cpu5\x00ACTION=online\x00DEVPATH=/devices/system/cpu/cpu5\x00SUBSYSTEM=cpu\x00SEQNUM=1202\x00", true},
		{"add@/devices/system/machinecheck/machinecheck5\x00ACTION=add\x00SUBSYSTEM=machinecheck\x00", false},
		{"change@/devices/system/cpu/cpu5\x00ACTION=change\x00SUBSYSTEM=cpu\x00", false},
		{"online@/devices/system/memory/memory8\x00ACTION=online\x00SUBSYSTEM=memory\x00", false},
		{"", false},
	} {
		if got := cpuEvent([]byte(tt.msg)); got != tt.want {
			t.Errorf("cpuEvent(%q) = %t, want %t", tt.msg, got, tt.want)
		}
	}
}
