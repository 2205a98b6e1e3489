package load

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestNICInterfaces: only interfaces with a device link are asked for
// queue counters (not veths, bridges or lo), with their ifindex; one
// whose ifindex is unreadable or not a number is left out.
func TestNICInterfaces(t *testing.T) {
	sys := t.TempDir()
	mk := func(name, ifindex string, device bool) {
		dir := filepath.Join(sys, "class", "net", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if ifindex != "" {
			if err := os.WriteFile(filepath.Join(dir, "ifindex"), []byte(ifindex), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if device {
			if err := os.Symlink("../../../devices/pci0000:00/0000:00:03.0", filepath.Join(dir, "device")); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("lo", "1\n", false)
	mk("eth0", "2\n", true)
	mk("veth1a2b", "7\n", false)
	mk("eth1", "x\n", true)
	mk("eth2", "", true)
	mk("ens5", "12\n", true)
	got, err := nicInterfaces(sys)
	if err != nil {
		t.Fatal(err)
	}
	want := []ifaceKey{{"ens5", 12}, {"eth0", 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nicInterfaces = %v, want %v", got, want)
	}
	if _, err := nicInterfaces(filepath.Join(sys, "missing")); err == nil {
		t.Error("no error for a sysfs without class/net")
	}
}
