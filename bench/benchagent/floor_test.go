//go:build linux

package main

import (
	"os"
	"slices"
	"testing"
)

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

// TestLoadPlans: the floor's targets are the planned masks of each
// plan, keyed by its allowed CPUs; IRQs left alone are not targets.
func TestLoadPlans(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	all := write("all.json", `{"allowed":"0-7","devices":[{"pci":"0000:41:00.0","irqs":[
		{"irq":27,"planned":"4"},{"irq":28,"planned":"5"},{"irq":40,"planned":"","managed":true}]}]}`)
	off := write("off.json", `{"allowed":"0-4,6-7","devices":[{"pci":"0000:41:00.0","irqs":[
		{"irq":27,"planned":"4"},{"irq":28,"planned":"6"}]}]}`)
	plans, irqs, err := loadPlans([]string{all, off})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(irqs, []int{27, 28}) {
		t.Errorf("IRQs = %v, want the planned 27 and 28", irqs)
	}
	if got := plans["0-4,6-7"][28].String(); got != "6" {
		t.Errorf("IRQ 28 with CPU 5 offline = %q, want 6", got)
	}
	if _, ok := plans["0-7"][40]; ok {
		t.Error("managed IRQ 40 is a target")
	}
	if _, _, err := loadPlans([]string{write("bad.json", "{")}); err == nil {
		t.Error("a broken plan loaded")
	}
}
