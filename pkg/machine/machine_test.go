package machine_test

import (
	"errors"
	"os"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/policy"
)

// machineTree is the lab's 4-node guest with all 8 CPUs online, or with
// node 3's CPUs 6-7 offline, and a virtio NIC on node 2.
func machineTree(t *testing.T, cpus6and7 bool) *fakesys.Tree {
	tr := fakesys.New(t)
	m := fakesys.QEMUGuest()
	online := []int{0, 1, 2, 3, 4, 5, 6, 7}
	if !cpus6and7 {
		m.Online, m.Possible = "0-5", "0-7"
		m.Nodes[3].CPUs = ""
		online = online[:6]
	}
	tr.AddMachine(m)
	tr.AddInterrupts(online)
	tr.AddVirtioNet(fakesys.VirtioNet{BDF: "0000:41:00.0", Index: 0, Interface: "eth0", Pairs: 4, FirstIRQ: 24, NUMANode: 2})
	return tr
}

func roots(t *testing.T, cpus6and7 bool) machine.Roots {
	tr := machineTree(t, cpus6and7)
	return machine.Roots{Sys: tr.Sys(), Proc: tr.Proc()}
}

// planWith reads r whole and plans with mem.
func planWith(r machine.Roots, mem policy.Memory) (planned, error) {
	cfg := config.Default()
	m, err := machine.Read(r, cfg)
	if err != nil {
		return planned{}, err
	}
	return planned{m, policy.Compute(m.Snapshot, m.Inventory, m.Config(cfg), mem, policy.Balancing{})}, nil
}

func TestPlanReadsAndPlans(t *testing.T) {
	p, err := plan(machine.NewReader(roots(t, true)), config.Default(), true)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Consistent || p.Plan.Allowed.String() != "0-7" || len(p.Plan.Devices) != 1 || p.Took <= 0 {
		t.Fatalf("Plan = %+v", p)
	}
	if got := p.Plan.Devices[0].IRQs[1].Planned.String(); got != "4" {
		t.Errorf("queue 0 planned on %s, want node 2's first CPU 4", got)
	}
	// Refusals are the caller's memory, planned as managed.
	p, err = planWith(roots(t, true), policy.Memory{Refused: policy.Refusals{25: {Name: "virtio0-input.0", Errno: "EIO"}}})
	if err != nil {
		t.Fatal(err)
	}
	if q := p.Plan.Devices[0].IRQs[1]; q.Number != 25 || !q.Managed || !q.LeftAlone() || q.Reason != "managed by the kernel: write failed with EIO" {
		t.Errorf("refused IRQ planned as %+v", q)
	}
}

// TestPlanNamesTheFailedReader: a round that cannot read says which
// reader failed, so metrics count read_topology and read_inventory.
func TestPlanNamesTheFailedReader(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(r machine.Roots)
		source string
	}{
		{"no sysfs CPUs", func(r machine.Roots) { os.RemoveAll(r.Sys + "/devices/system/cpu") }, "topology"},
		{"no /proc/interrupts", func(r machine.Roots) { os.Remove(r.Proc + "/interrupts") }, "inventory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := roots(t, true)
			tc.damage(r)
			_, err := machine.Read(r, config.Default())
			var re *machine.ReadError
			if !errors.As(err, &re) || re.Source != tc.source {
				t.Fatalf("err = %v, want a %s ReadError", err, tc.source)
			}
		})
	}
}
