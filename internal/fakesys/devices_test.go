package fakesys

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAddVirtioNetLayout(t *testing.T) {
	tr := New(t)
	tr.AddInterrupts([]int{0, 2})
	irqs := tr.AddVirtioNet(VirtioNet{BDF: "0000:41:00.0", Index: 0, Interface: "eth0", Pairs: 2, FirstIRQ: 30, NUMANode: 1})
	if len(irqs) != 5 || irqs[0] != 30 || irqs[4] != 34 {
		t.Fatalf("irqs = %v", irqs)
	}
	b, err := os.ReadFile(tr.Path("proc/interrupts"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if f := strings.Fields(lines[0]); strings.Join(f, " ") != "CPU0 CPU2" {
		t.Errorf("header = %q", lines[0])
	}
	if f := strings.Fields(lines[2]); strings.Join(f, " ") != "31: 0 0 IR-PCI-MSIX-0000:41:00.0 1-edge virtio0-input.0" {
		t.Errorf("row = %q", lines[2])
	}
	if !strings.HasPrefix(strings.TrimSpace(lines[len(lines)-1]), "MIS:") {
		t.Errorf("last line = %q", lines[len(lines)-1])
	}
	resolve := func(rel string) string {
		t.Helper()
		p, err := filepath.EvalSymlinks(tr.Path(rel))
		if err != nil {
			t.Fatal(err)
		}
		r, _ := filepath.Rel(tr.Root, p)
		return r
	}
	dev := "sys/devices/pci0000:41/0000:41:00.0"
	for rel, want := range map[string]string{
		"sys/bus/pci/devices/0000:41:00.0": dev,
		"sys/class/net/eth0/device":        dev + "/virtio0",
		dev + "/driver":                    "sys/bus/pci/drivers/virtio-pci",
		dev + "/virtio0/driver":            "sys/bus/virtio/drivers/virtio_net",
	} {
		if got := resolve(rel); got != want {
			t.Errorf("%s -> %s, want %s", rel, got, want)
		}
	}
	for _, f := range []string{"msi_irqs/30", "msi_irqs/34", "numa_node", "class", "irq"} {
		if _, err := os.Stat(tr.Path(dev + "/" + f)); err != nil {
			t.Error(err)
		}
	}
}

func TestAddIRQModes(t *testing.T) {
	tests := []struct {
		spec   IRQSpec
		list   string
		hex    string
		mode   os.FileMode
		hint   string
		hasEff bool
	}{
		{IRQSpec{Number: 1}, "0-3\n", "f\n", 0o644, "0\n", false},
		{IRQSpec{Number: 2, Affinity: "2", Effective: "2", Hint: "3", Managed: true}, "2\n", "4\n", 0o444, "8\n", true},
	}
	for _, tt := range tests {
		tr := New(t)
		tr.AddInterrupts([]int{0, 1, 2, 3})
		tr.AddIRQ(tt.spec)
		dir := tr.Path("proc/irq/" + string(rune('0'+tt.spec.Number)))
		for name, want := range map[string]string{"smp_affinity_list": tt.list, "smp_affinity": tt.hex, "affinity_hint": tt.hint} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || string(b) != want {
				t.Errorf("IRQ %d %s = %q, %v; want %q", tt.spec.Number, name, b, err, want)
			}
		}
		for _, name := range []string{"smp_affinity_list", "smp_affinity"} {
			st, err := os.Stat(filepath.Join(dir, name))
			if err != nil || st.Mode().Perm() != tt.mode {
				t.Errorf("IRQ %d %s mode = %v, %v; want %v", tt.spec.Number, name, st.Mode().Perm(), err, tt.mode)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "effective_affinity_list")); (err == nil) != tt.hasEff {
			t.Errorf("IRQ %d effective_affinity_list: %v", tt.spec.Number, err)
		}
	}
}
