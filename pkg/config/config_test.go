package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRuleFor(t *testing.T) {
	c, err := Parse("rules.yaml", []byte(doc(
		"devices:",
		"  - name: eth1 only",
		"    match: {interface: eth1}",
		"    policy: linear",
		"  - name: mlx5 on eth",
		"    match: {driver: mlx5_core, interface: 'eth[0-9]+'}",
		"    policy: numa-hop",
		"  - name: any mlx5",
		"    match: {driver: mlx5_core}",
		"    policy: ignore",
		"  - name: by irq",
		"    match: {irq: 'nvme[0-9]+q[0-9]+'}",
		"    policy: pinned",
		"    cpus: 0",
		"  - name: by pci",
		"    match: {pci: '0000:00:1f\\.6'}",
	)))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		d    DeviceFacts
		want string // "" for no rule
	}{
		{"exact interface", DeviceFacts{Interfaces: []string{"eth1"}}, "eth1 only"},
		{"anchored: eth10 is not eth1", DeviceFacts{Interfaces: []string{"eth10"}}, ""},
		{"anchored: xeth1 is not eth1", DeviceFacts{Interfaces: []string{"xeth1"}}, ""},
		{"first match wins", DeviceFacts{Drivers: []string{"mlx5_core"}, Interfaces: []string{"eth1"}}, "eth1 only"},
		{"all keys must match", DeviceFacts{Drivers: []string{"mlx5_core"}, Interfaces: []string{"ib0"}}, "any mlx5"},
		{"any interface matches", DeviceFacts{Drivers: []string{"mlx5_core"}, Interfaces: []string{"ib0", "eth10"}}, "mlx5 on eth"},
		{"any driver matches", DeviceFacts{Drivers: []string{"vfio-pci", "mlx5_core"}}, "any mlx5"},
		{"driver prefix is not a match", DeviceFacts{Drivers: []string{"mlx5_core_extra"}}, ""},
		{"any irq name matches", DeviceFacts{IRQNames: []string{"nvme0q0", "nvme0q12"}}, "by irq"},
		{"irq anchored", DeviceFacts{IRQNames: []string{"nvme0q1-extra"}}, ""},
		{"pci", DeviceFacts{PCI: "0000:00:1f.6"}, "by pci"},
		{"pci escaped dot", DeviceFacts{PCI: "0000:00:1fx6"}, ""},
		{"no facts", DeviceFacts{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := c.RuleFor(tt.d)
			switch {
			case tt.want == "" && ok:
				t.Errorf("RuleFor = %q (line %d), want no rule", r.Name, r.Line)
			case tt.want != "" && (!ok || r.Name != tt.want):
				t.Errorf("RuleFor = %+v, %v; want %q", r, ok, tt.want)
			}
		})
	}
	if r, _ := c.RuleFor(DeviceFacts{Interfaces: []string{"eth1"}}); r != &c.Devices[0] {
		t.Error("RuleFor does not return the Config's own rule")
	}
}

func TestMatchZeroMatchesAll(t *testing.T) {
	if !(Match{}).matches(DeviceFacts{}) {
		t.Error("zero Match does not match an empty device")
	}
	if _, ok := Default().RuleFor(DeviceFacts{PCI: "0000:00:00.0"}); ok {
		t.Error("Default has a rule")
	}
}

func TestLoadOrDefault(t *testing.T) {
	c, err := LoadOrDefault(filepath.Join(t.TempDir(), "absent.yaml"))
	if err != nil || c.Source != "" || !c.ExcludeIsolated {
		t.Errorf("missing file: %+v, %v; want the defaults", c, err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("nope: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrDefault(bad); !invalid(err) {
		t.Errorf("existing bad file: %v, want an *Error", err)
	}
}
