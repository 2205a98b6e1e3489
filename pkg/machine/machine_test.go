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

func roots(t *testing.T, cpus6and7 bool) machine.Roots {
	tr := fakesys.NewQEMUGuestNIC(t, cpus6and7)
	return machine.Roots{Sys: tr.Sys(), Proc: tr.Proc()}
}

// planWith reads r whole and plans with mem.
func planWith(r machine.Roots, mem policy.Memory) (planned, error) {
	cfg := config.Default()
	m, err := machine.Read(r, cfg)
	if err != nil {
		return planned{}, err
	}
	return planned{m, policy.Compute(m.Snapshot, m.Inventory, cfg, m.ToolBans(), mem, policy.Balancing{})}, nil
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
