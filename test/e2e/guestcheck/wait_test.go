package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// procTree writes sys/bus/pci/devices/<pci>/msi_irqs and
// proc/irq/N/{<name>/,smp_affinity_list} for a virtio-net at
// 0000:41:00.0 whose queue pair K is on lists[K], and an NVMe IRQ.
func procTree(t *testing.T, lists []string, config string) string {
	t.Helper()
	root := t.TempDir()
	irq := 26
	add := func(name, pci, list string) {
		for _, d := range []string{
			filepath.Join(root, "proc/irq", strconv.Itoa(irq), name),
			filepath.Join(root, "sys/bus/pci/devices", pci, "msi_irqs"),
		} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(root, "sys/bus/pci/devices", pci, "msi_irqs", strconv.Itoa(irq)), []byte("msix\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "proc/irq", strconv.Itoa(irq), "smp_affinity_list"), []byte(list+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		irq++
	}
	add("virtio0-config", "0000:41:00.0", config)
	for k, l := range lists {
		add("virtio0-input."+strconv.Itoa(k), "0000:41:00.0", l)
		add("virtio0-output."+strconv.Itoa(k), "0000:41:00.0", l)
	}
	add("nvme0q1", "0000:21:00.0", "0")
	return root
}

func TestWaitPlacement(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lists  []string
		config string
		args   []string
		want   string // prefix of the output line
	}{
		{"placed", []string{"4", "5"}, "4-5", []string{"-queues", "4 5", "-control", "4,5"}, "OK ms="},
		{"control not checked", []string{"4", "5"}, "0-7", []string{"-queues", "4,5"}, "OK ms="},
		{"wrong cpu", []string{"4", "6"}, "4-5", []string{"-queues", "4 5", "-timeout", "20ms"},
			"TIMEOUT ms="},
		{"missing queue", []string{"4"}, "4-5", []string{"-queues", "4 5", "-timeout", "20ms"}, "TIMEOUT ms="},
		{"no device IRQs", nil, "", []string{"-pci", "0000:42:00.0", "-queues", "4", "-timeout", "20ms"}, "TIMEOUT ms="},
		{"extra queue", []string{"4", "5", "6"}, "4-5", []string{"-queues", "4 5", "-timeout", "20ms"}, "TIMEOUT ms="},
		// A placement found long after the clock started is still OK:
		// the latency is a figure, not a verdict.
		{"slow", []string{"4", "5"}, "4-5", []string{"-queues", "4 5", "-since", "0.001"}, "OK ms="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := procTree(t, tc.lists, tc.config)
			var out bytes.Buffer
			err := waitPlacement(root, append([]string{"-pci", "0000:41:00.0"}, tc.args...), &out)
			if !strings.HasPrefix(out.String(), tc.want) {
				t.Errorf("output %q, want prefix %q", out.String(), tc.want)
			}
			if (err == nil) != (tc.want == "OK ms=") {
				t.Errorf("err = %v for output %q", err, out.String())
			}
		})
	}
}

func TestWaitPlacementWrites(t *testing.T) {
	root := procTree(t, []string{"4"}, "4")
	target := filepath.Join(root, "knob")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := waitPlacement(root, []string{"-pci", "0000:41:00.0", "-queues", "4", "-write", target + "=1", "-hold", "10ms"}, &out); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if b, _ := os.ReadFile(target); string(b) != "1\n" {
		t.Errorf("knob = %q", b)
	}
	if !strings.Contains(out.String(), "irqs=26:4,27:4,28:4 first=26:4,27:4,28:4") || !strings.Contains(out.String(), "hold_ms=") {
		t.Errorf("output %q", out.String())
	}
	out.Reset()
	err := waitPlacement(root, []string{"-pci", "0000:41:00.0", "-queues", "4", "-write", filepath.Join(root, "no/such") + "=1"}, &out)
	if err == nil || !strings.HasPrefix(out.String(), "ERROR ") {
		t.Errorf("write to a missing file: %v, %q", err, out.String())
	}
}

// TestWaitPlacementExec: -exec runs a shell command after the writes
// (ethtool -L in the guest); one that fails is an ERROR with its output.
func TestWaitPlacementExec(t *testing.T) {
	root := procTree(t, []string{"4"}, "4")
	target := filepath.Join(root, "knob")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := waitPlacement(root, []string{"-pci", "0000:41:00.0", "-queues", "4", "-write", target + "=1",
		"-exec", "cat " + target + " >" + target + ".copy", "-hold", "10ms"}, &out)
	if err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if b, _ := os.ReadFile(target + ".copy"); string(b) != "1\n" {
		t.Errorf("the command ran before the write, or not at all: copy = %q", b)
	}
	out.Reset()
	err = waitPlacement(root, []string{"-pci", "0000:41:00.0", "-queues", "4", "-exec", "echo no such device; exit 3"}, &out)
	if err == nil || !strings.HasPrefix(out.String(), "ERROR ") || !strings.Contains(out.String(), "no such device") {
		t.Errorf("failing command: %v, %q", err, out.String())
	}
}
