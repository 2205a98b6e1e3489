package config

import (
	"strings"
	"testing"
)

func TestIRQNumbers(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"list", `"25,30-31"`, "25,30-31"},
		{"one number", `25`, "25"},
		{"sequence", `[25, 30-31, "40"]`, "25,30-31,40"},
		{"spaces", `"25, 30-31"`, "25,30-31"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("c.yaml", []byte("devices:\n  - match: {irq_numbers: "+tc.in+"}\n    policy: ignore\n"))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Devices[0].Match.IRQNumbers.String(); got != tc.want {
				t.Errorf("irq_numbers %s, want %s", got, tc.want)
			}
		})
	}
}

func TestIRQNumbersInvalid(t *testing.T) {
	for _, tc := range []struct{ name, rule, want string }{
		{"reversed", "match: {irq_numbers: \"31-30\"}\n    policy: ignore",
			`c.yaml:2: devices[0].match.irq_numbers: "31-30": range "31-30" ends before it starts (want IRQ numbers: a list like "25,30-31", one number, or a sequence of them such as [25, 30-31])`},
		{"not a number", "match: {irq_numbers: [25, eth0]}\n    policy: ignore",
			`c.yaml:2: devices[0].match.irq_numbers[1]: "eth0": "eth0" is not an IRQ number or range (numbers from 0 to 2147483647)`},
		{"negative", "match: {irq_numbers: -1}\n    policy: ignore", `"-1" is not an IRQ number or range`},
		{"empty", "match: {irq_numbers: []}\n    policy: ignore", `devices[0].match.irq_numbers: empty (want IRQ numbers`},
		{"a mapping", "match: {irq_numbers: {a: 1}}\n    policy: ignore", `devices[0].match.irq_numbers: got a mapping (want IRQ numbers`},
		{"no policy", "match: {irq_numbers: 25}",
			`c.yaml:2: devices[0].policy: missing for match.irq_numbers (want ignore or pinned: a rule by irq_numbers leaves single IRQs alone or pins them)`},
		{"numa-hop", "match: {irq_numbers: 25}\n    policy: numa-hop",
			`c.yaml:3: devices[0].policy: numa-hop is not for match.irq_numbers (want ignore or pinned`},
		{"a device key", "match: {irq_numbers: 25}\n    policy: pinned\n    cpus: 3\n    xps: leave",
			`c.yaml:5: devices[0].xps: not allowed with match.irq_numbers (want it in a rule matching devices)`},
		{"pinned without cpus", "match: {irq_numbers: 25}\n    policy: pinned", `devices[0].cpus: missing for policy pinned`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte("devices:\n  - "+tc.rule+"\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestIRQRule: a rule by number claims the IRQs it names, unless a
// device rule before it matches their device; device rules never match
// by number, and RuleFor skips rules by number.
func TestIRQRule(t *testing.T) {
	c, err := Parse("c.yaml", []byte(`devices:
  - match: {interface: eth9}
    policy: linear
  - name: leave 25
    match: {irq_numbers: "25,40-41"}
    policy: ignore
  - name: pin eth1's 30
    match: {irq_numbers: 30, interface: eth1}
    policy: pinned
    cpus: 3
  - match: {interface: eth.*}
    policy: numa-hop
`))
	if err != nil {
		t.Fatal(err)
	}
	eth := func(name string) DeviceFacts {
		return DeviceFacts{PCI: "0000:01:00.0", Interfaces: []string{name}, IRQNames: []string{name + "-0"}, IRQs: []int{25, 30}}
	}
	for _, tc := range []struct {
		d      DeviceFacts
		number int
		want   string // the rule's name, "" for none
	}{
		{eth("eth0"), 25, "leave 25"},
		{eth("eth0"), 41, "leave 25"},
		{eth("eth0"), 30, ""},
		{eth("eth1"), 30, "pin eth1's 30"},
		{eth("eth9"), 25, ""}, // the device rule comes first
		{DeviceFacts{IRQNames: []string{"acpi"}}, 40, "leave 25"},
		{DeviceFacts{IRQNames: []string{"acpi"}}, 9, ""},
	} {
		r, ok := c.IRQRule(tc.d, tc.number, "x")
		if got := ""; ok != (tc.want != "") || ok && r.Name != tc.want {
			if ok {
				got = r.Name
			}
			t.Errorf("IRQRule(%v, %d) = %q, want %q", tc.d.Interfaces, tc.number, got, tc.want)
		}
	}
	if r, ok := c.RuleFor(eth("eth0")); !ok || r.Policy != PolicyNUMAHop {
		t.Errorf("RuleFor(eth0) = %+v, %t; want the numa-hop device rule", r, ok)
	}
}
