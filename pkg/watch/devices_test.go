package watch

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

func TestIsBDF(t *testing.T) {
	for s, want := range map[string]bool{
		"0000:41:00.0":      true,
		"0000:00:1f.7":      true,
		"10000:01:00.0":     true, // a VMD domain
		"ffffffff:ff:1f.3":  true,
		"":                  false,
		"0000:41:00":        false,
		"000:41:00.0":       false,
		"100000000:41:00.0": false, // a domain wider than 32 bits
		"0000:4g:00.0":      false,
		"0000:4A:00.0":      false, // the kernel prints lower case
		"0000:41:00.8":      false, // functions are 0 to 7
		"0000:41:00.00":     false,
		"0000:41:000.0":     false,
		"0000-41:00.0":      false,
		"0000:41-00.0":      false,
		"0000:41:00-0":      false,
		"pci0000:40":        false,
		"virtio0":           false,
		"0000:41:00.0:":     false,
	} {
		if got := isBDF(s); got != want {
			t.Errorf("isBDF(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestPCIDevice(t *testing.T) {
	// The recorded virtio-net re-bind: every pci uevent names the
	// device, no other does.
	for file, want := range map[string]string{
		"pci-unbind":     "0000:41:00.0",
		"pci-bind":       "0000:41:00.0",
		"pci-remove":     "0000:41:00.0",
		"eth0-add":       "",
		"eth0-remove":    "",
		"virtio0-unbind": "",
		"cpu5-online":    "",
	} {
		u, err := ParseUevent(readUevent(t, file+".uevent"))
		if err != nil {
			t.Fatal(err)
		}
		if got := pciDevice(u); got != want {
			t.Errorf("%s: pciDevice = %q, want %q", file, got, want)
		}
	}
	for _, tt := range []struct {
		u    Uevent
		want string
	}{
		{Uevent{Subsystem: "pci", Action: "add", DevPath: "/devices/pci0000:40/0000:40:01.0/0000:41:00.0"}, "0000:41:00.0"},
		{Uevent{Subsystem: "pci", Action: "bind", DevPath: "/devices/pci0000:00/0000:00:0e.0/10000:e1:00.0"}, "10000:e1:00.0"},
		{Uevent{Subsystem: "pci", Action: "add", DevPath: "/devices/pci0000:40"}, ""},
		{Uevent{Subsystem: "pci", Action: "add", DevPath: "/devices/pci0000:40/0000:41:00.0/extra"}, ""},
		{Uevent{Subsystem: "pci", Action: "add", DevPath: "/"}, ""},
		{Uevent{Subsystem: "net", Action: "add", DevPath: "/devices/pci0000:40/0000:41:00.0"}, ""},
	} {
		if got := pciDevice(tt.u); got != tt.want {
			t.Errorf("pciDevice(%s %s@%s) = %q, want %q", tt.u.Subsystem, tt.u.Action, tt.u.DevPath, got, tt.want)
		}
	}
}

// bdf returns the i-th of a series of distinct PCI addresses.
func bdf(i int) string { return fmt.Sprintf("0000:%02x:%02x.%d", i/32, i%32/8*4, i%8) }

func pciUevent(action, dev string) Uevent {
	return Uevent{Subsystem: "pci", Action: action, DevPath: "/devices/pci0000:40/0000:40:01.0/" + dev}
}

// collect sends us to a watcher nobody reads and returns the one
// trigger everything it emitted merged into.
func collect(t *testing.T, us []Uevent) Trigger {
	t.Helper()
	src := newFake[Uevent]()
	w := startWatcher(t, Options{}, src, nil)
	for _, u := range us {
		src.send(u, nil)
	}
	time.Sleep(2 * testMaxDelay)
	tr, ok := poll(w)
	if !ok {
		t.Fatal("no trigger")
	}
	return tr
}

func TestDevicesFromUevents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := collect(t, []Uevent{
			pciUevent("unbind", "0000:41:00.0"),
			pciUevent("bind", "0000:41:00.0"), // the same device again
			pciUevent("add", "0000:c1:00.1"),
			pciUevent("remove", "0000:02:00.0"),
			pciUevent("add", "pci0000:40"),      // not a device address
			pciUevent("change", "0000:03:00.0"), // not interesting
			{Subsystem: "cpu", Action: "online", DevPath: "/devices/system/cpu/cpu5"},
			{Subsystem: "net", Action: "add", DevPath: "/devices/pci0000:40/0000:40:01.0/0000:05:00.0"},
		})
		if want := []string{"0000:02:00.0", "0000:41:00.0", "0000:c1:00.1"}; !slices.Equal(tr.Devices, want) {
			t.Errorf("Devices = %q, want %q", tr.Devices, want)
		}
		if tr.Scope != ScopeDevices {
			t.Errorf("Scope = %v, want devices", tr.Scope)
		}
		wantCauses(t, tr, map[Cause]int{CauseUevent: 7})
	})
}

func TestDevicesBound(t *testing.T) {
	many := func(n int) []Uevent {
		var us []Uevent
		for i := range n {
			us = append(us, pciUevent("bind", bdf(n-1-i)))
		}
		return us
	}
	t.Run("at the bound", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr := collect(t, append(many(maxDevices), many(maxDevices)...))
			if len(tr.Devices) != maxDevices || !slices.IsSorted(tr.Devices) || tr.Scope != ScopeDevices {
				t.Errorf("%d devices at scope %v, want %d sorted at devices", len(tr.Devices), tr.Scope, maxDevices)
			}
		})
	})
	t.Run("past the bound", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr := collect(t, many(maxDevices+1))
			if tr.Devices != nil || tr.Scope != ScopeAll {
				t.Errorf("%d devices at scope %v, want none at all", len(tr.Devices), tr.Scope)
			}
			wantCauses(t, tr, map[Cause]int{CauseUevent: maxDevices + 1})
		})
	})
}

func TestMergeDevices(t *testing.T) {
	devs := func(from, to int) []string {
		var ds []string
		for i := from; i < to; i++ {
			ds = append(ds, bdf(i))
		}
		return ds
	}
	tr := func(s Scope, ds ...string) Trigger {
		return Trigger{Causes: map[Cause]int{CauseUevent: 1}, Scope: s, Devices: ds}
	}
	tests := []struct {
		name    string
		a, b    Trigger
		scope   Scope
		devices []string
	}{
		{"union", tr(ScopeDevices, "0000:41:00.0", "0000:c1:00.0"), tr(ScopeDevices, "0000:02:00.0", "0000:41:00.0"),
			ScopeDevices, []string{"0000:02:00.0", "0000:41:00.0", "0000:c1:00.0"}},
		{"cpu adds none", tr(ScopeCPU), tr(ScopeDevices, "0000:41:00.0"), ScopeDevices, []string{"0000:41:00.0"}},
		{"all drops them", tr(ScopeDevices, "0000:41:00.0"), tr(ScopeAll), ScopeAll, nil},
		{"all keeps none", tr(ScopeAll), tr(ScopeDevices, "0000:41:00.0"), ScopeAll, nil},
		{"at the bound", tr(ScopeDevices, devs(0, 200)...), tr(ScopeDevices, devs(100, maxDevices)...),
			ScopeDevices, devs(0, maxDevices)},
		{"past the bound", tr(ScopeDevices, devs(0, 200)...), tr(ScopeDevices, devs(100, maxDevices+1)...), ScopeAll, nil},
	}
	for _, tt := range tests {
		for _, order := range [][2]Trigger{{tt.a, tt.b}, {tt.b, tt.a}} {
			a, b := order[0], order[1]
			a.Devices = slices.Clone(a.Devices)
			a.merge(b)
			if a.Scope != tt.scope || !slices.Equal(a.Devices, tt.devices) {
				t.Errorf("%s: merged to scope %v, %d devices %q; want %v, %d %q",
					tt.name, a.Scope, len(a.Devices), a.Devices, tt.scope, len(tt.devices), tt.devices)
			}
		}
	}
}

// TestEmitMergesDevices checks that a trigger the consumer has not
// taken yet merges with the next into the union of their devices.
func TestEmitMergesDevices(t *testing.T) {
	w, err := newWatcher(Options{}, openers{})
	if err != nil {
		t.Fatal(err)
	}
	w.emit(Trigger{Causes: map[Cause]int{CauseUevent: 2}, Scope: ScopeDevices, Devices: []string{"0000:41:00.0", "0000:c1:00.0"}})
	w.emit(Trigger{Causes: map[Cause]int{CauseUevent: 1}, Scope: ScopeCPU})
	w.emit(Trigger{Causes: map[Cause]int{CauseUevent: 1}, Scope: ScopeDevices, Devices: []string{"0000:02:00.0", "0000:41:00.0"}})
	tr, ok := poll(w)
	if !ok {
		t.Fatal("no trigger")
	}
	if want := []string{"0000:02:00.0", "0000:41:00.0", "0000:c1:00.0"}; !slices.Equal(tr.Devices, want) || tr.Scope != ScopeDevices {
		t.Errorf("merged to %v %q, want devices %q", tr.Scope, tr.Devices, want)
	}
	wantCauses(t, tr, map[Cause]int{CauseUevent: 4})
}
