package hostcorpus

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/policy"
)

// sourcesDir holds the raw listings, each citing its source.
const sourcesDir = hostsDir + "/sources"

// listingQueues is, per listing, the queue IRQs each driver has on that
// host as its names (or vector order) show them; 0: all control.
var listingQueues = map[string]map[string]int{
	"nehalem":        {"igb": 8},
	"sandybridge-ep": {"igb": 8},
	"westmere-ex":    {"igb": 8, "megaraid_sas": 1},
	"nehalem-ex":     {"bnx2": 16, "mpt2sas": 1},
	"haswell-ep":     {"hpsa": 32, "tg3": 5},
	"broadwell-ep":   {"hpsa": 32, "tg3": 20},
	"fam15h":         {"hpsa": 32, "tg3": 5},
	"fam17h":         {"smartpqi": 16, "tg3": 20, "ccp": 0},
	"rbench":         {"megaraid_sas": 41, "mlx5_core": 40, "nvme": 80, "igb": 8, "tg3": 5, "ahci": 0},
	"intersched":     {"igb": 16},
	"skyao-pve":      {"mlx4_core": 24},
	"frc971-desktop": {"nvme": 20, "igc": 4, "iwlwifi": 14},
}

// TestListings builds each listing's tree and plans it: every MSI
// vector of the listing is an IRQ of a planned device, each driver has
// its queues, and an HBA's queues follow its vector order. With
// -update it writes the tree's capture, testdata/hosts/listing-*.tar.gz.
func TestListings(t *testing.T) {
	for _, l := range Listings {
		t.Run(l.Name, func(t *testing.T) {
			t.Parallel()
			tr := fakesys.New(t)
			if err := l.Build(tr, sourcesDir); err != nil {
				t.Fatal(err)
			}
			checkListingPlan(t, l, tr)
			if *update {
				Pack(t, tr, "", filepath.Join(hostsDir, "listing-"+l.Name+".tar.gz"))
			}
		})
	}
}

// checkListingPlan plans the tree of l with the default config.
func checkListingPlan(t *testing.T, l Listing, tr *fakesys.Tree) {
	t.Helper()
	m, err := machine.NewReader(machine.Roots{Sys: tr.Sys(), Proc: tr.Proc()}).Read(config.Default(), inventory.DepthAll, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := ReadSource(filepath.Join(sourcesDir, l.Name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	msi := 0
	for line := range strings.Lines(string(raw)) {
		if strings.Contains(line, "PCI-MSI") {
			msi++
		}
	}
	p := policy.Compute(m.Snapshot, m.Inventory, config.Default(), nil, policy.Memory{}, policy.Balancing{})
	planned, queues := 0, map[string]int{}
	for _, d := range p.Devices {
		planned += len(d.IRQs)
		var order []int
		for _, q := range d.IRQs {
			if q.Role == policy.RoleQueue {
				queues[d.Driver]++
				order = append(order, q.Queue)
			}
		}
		if slices.Contains([]string{"hpsa", "smartpqi", "megaraid_sas"}, d.Driver) {
			for i, q := range order {
				if q != i {
					t.Errorf("%s %s: queues %v, want the vector order", d.Driver, d.PCI, order)
					break
				}
			}
		}
	}
	if planned != msi {
		t.Errorf("%d IRQs planned, the listing has %d MSI vectors", planned, msi)
	}
	for drv, n := range listingQueues[l.Name] {
		if queues[drv] != n {
			t.Errorf("%s: %d queue IRQs, want %d", drv, queues[drv], n)
		}
	}
}
