package policy_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/policy"
)

// TestExampleConfigIsInert: the config the package installs plans the
// lab guests (NICs, NVMe, a device at an address its examples name)
// exactly as no config does.
func TestExampleConfigIsInert(t *testing.T) {
	example, err := config.Load(filepath.Join("..", "..", "configs", "numairqd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fakesys.QEMUGuest())
	f.tree.AddQEMUGuestDevices()
	// The address one of the commented-out examples pins to CPUs 4-7.
	f.tree.AddMSIXDevice(fakesys.PCIDevice{BDF: "0000:5e:00.0", NUMANode: 0, Driver: "nvme", Class: "0x010802"},
		fakesys.IRQSpec{Number: 60, Name: "nvme1q0", Affinity: "0"})
	b := readBack(t, f)
	none := b.Plan(config.Default(), policy.Memory{}, policy.Balancing{}).Doc()
	if got := b.Plan(example, policy.Memory{}, policy.Balancing{}).Doc(); !reflect.DeepEqual(got, none) {
		t.Error("the example config plans differently from no config")
	}
	// The same example rule, set, does change the plan: the check above
	// can see one.
	pinned := parseConfig(t, "devices:\n  - match: {pci: \"0000:5e:00\\\\.0\"}\n    policy: pinned\n    cpus: \"4-7\"\n")
	if got := b.Plan(pinned, policy.Memory{}, policy.Balancing{}).Doc(); reflect.DeepEqual(got, none) {
		t.Error("pinning 0000:5e:00.0 plans as no config does: the fixture cannot tell")
	}
}
