package config

import (
	"strings"
	"testing"
)

func TestXPS(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		global     XPSMode
		rules      []XPSMode // each rule's resolved mode, by XPSFor
	}{
		{"default follows", "", XPSFollow, nil},
		{"global leave", "xps: leave", XPSLeave, nil},
		{"rule overrides global", "xps: leave\ndevices:\n  - match: {driver: mlx5_core}\n    xps: follow\n  - match: {driver: ice}",
			XPSLeave, []XPSMode{XPSFollow, XPSLeave}},
		{"rule leave under default", "devices:\n  - match: {driver: virtio-pci}\n    xps: leave", XPSFollow, []XPSMode{XPSLeave}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("t.yaml", []byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if c.XPS != tc.global || c.XPSFor(nil) != tc.global {
				t.Errorf("XPS %q, XPSFor(nil) %q, want %q", c.XPS, c.XPSFor(nil), tc.global)
			}
			if len(c.Devices) != len(tc.rules) {
				t.Fatalf("%d rules, want %d", len(c.Devices), len(tc.rules))
			}
			for i, want := range tc.rules {
				if got := c.XPSFor(&c.Devices[i]); got != want {
					t.Errorf("rule %d: XPSFor %q, want %q", i, got, want)
				}
			}
			if !strings.Contains(c.Summary(), " xps="+string(tc.global)+" ") {
				t.Errorf("Summary %q lacks xps=%s", c.Summary(), tc.global)
			}
		})
	}
}

func TestXPSInvalid(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"global unknown", "xps: always", `t.yaml:1: xps: unknown xps mode "always" (want one of follow, leave)`},
		{"global bool", "xps: true", `t.yaml:1: xps: got boolean true (want one of follow, leave)`},
		{"rule unknown", "devices:\n  - match: {driver: ice}\n    xps: off",
			`t.yaml:3: devices[0].xps: unknown xps mode "off" (want one of follow, leave)`},
		{"rule list", "devices:\n  - match: {driver: ice}\n    xps: [follow]",
			`t.yaml:3: devices[0].xps: got a list (want one of follow, leave)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("t.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatalf("parsed to %+v, want error %q", c, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}
