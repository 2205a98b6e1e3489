package config

import (
	"strings"
	"testing"
)

func TestNAPIThreads(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		global     NAPIThreadsMode
		rules      []NAPIThreadsMode // each rule's resolved mode, by NAPIThreadsFor
	}{
		{"default follows", "", NAPIThreadsFollow, nil},
		{"global leave", "napi_threads: leave", NAPIThreadsLeave, nil},
		{"rule overrides global", "napi_threads: leave\ndevices:\n  - match: {driver: mana}\n    napi_threads: follow\n  - match: {driver: ice}",
			NAPIThreadsLeave, []NAPIThreadsMode{NAPIThreadsFollow, NAPIThreadsLeave}},
		{"rule leave under default", "devices:\n  - match: {driver: virtio-pci}\n    napi_threads: leave", NAPIThreadsFollow, []NAPIThreadsMode{NAPIThreadsLeave}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("t.yaml", []byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if c.NAPIThreads != tc.global || c.NAPIThreadsFor(nil) != tc.global {
				t.Errorf("NAPIThreads %q, NAPIThreadsFor(nil) %q, want %q", c.NAPIThreads, c.NAPIThreadsFor(nil), tc.global)
			}
			if len(c.Devices) != len(tc.rules) {
				t.Fatalf("%d rules, want %d", len(c.Devices), len(tc.rules))
			}
			for i, want := range tc.rules {
				if got := c.NAPIThreadsFor(&c.Devices[i]); got != want {
					t.Errorf("rule %d: NAPIThreadsFor %q, want %q", i, got, want)
				}
			}
			if !strings.Contains(c.Summary(), " napi_threads="+string(tc.global)+" ") {
				t.Errorf("Summary %q lacks napi_threads=%s", c.Summary(), tc.global)
			}
		})
	}
}

func TestNAPIThreadsInvalid(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"global unknown", "napi_threads: pin", `t.yaml:1: napi_threads: unknown napi_threads mode "pin" (want one of follow, leave)`},
		{"global bool", "napi_threads: false", `t.yaml:1: napi_threads: got boolean false (want one of follow, leave)`},
		{"rule unknown", "devices:\n  - match: {driver: ice}\n    napi_threads: Follow",
			`t.yaml:3: devices[0].napi_threads: unknown napi_threads mode "Follow"; did you mean follow? (want one of follow, leave)`},
		{"rule twice", "devices:\n  - match: {driver: ice}\n    napi_threads: leave\n    napi_threads: leave",
			`devices[0].napi_threads`},
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
