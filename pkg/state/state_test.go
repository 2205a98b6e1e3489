package state_test

import (
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
)

// machine is a fixture tree: the lab's 4-node guest with all 8 CPUs
// online, or with node 3's CPUs 6-7 offline, and a virtio NIC on node 2.
func machine(t *testing.T, cpus6and7 bool) state.Roots {
	tr := machineTree(t, cpus6and7)
	return state.Roots{Sys: tr.Sys(), Proc: tr.Proc()}
}

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

func TestPlanReadsAndPlans(t *testing.T) {
	p, err := state.Plan(machine(t, true), config.Default(), nil, policy.Balancing{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Consistent || p.Plan.Allowed.String() != "0-7" || len(p.Plan.Devices) != 1 || p.Read <= 0 {
		t.Fatalf("Plan = %+v", p)
	}
	if got := p.Plan.Devices[0].IRQs[1].Planned.String(); got != "4" {
		t.Errorf("queue 0 planned on %s, want node 2's first CPU 4", got)
	}
	// Refusals are the caller's memory, planned as managed.
	p, err = state.Plan(machine(t, true), config.Default(), policy.Refusals{25: {Name: "virtio0-input.0", Errno: "EIO"}}, policy.Balancing{})
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
		damage func(r state.Roots)
		source string
	}{
		{"no sysfs CPUs", func(r state.Roots) { os.RemoveAll(r.Sys + "/devices/system/cpu") }, "topology"},
		{"no /proc/interrupts", func(r state.Roots) { os.Remove(r.Proc + "/interrupts") }, "inventory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := machine(t, true)
			tc.damage(r)
			_, err := state.Plan(r, config.Default(), nil, policy.Balancing{})
			var re *state.ReadError
			if !errors.As(err, &re) || re.Source != tc.source {
				t.Fatalf("err = %v, want a %s ReadError", err, tc.source)
			}
		})
	}
}

// TestReadersNeverSeeTwoRounds publishes rounds of two machines in turn
// (8 CPUs online, then 6) while readers load the newest State: every
// State a reader sees is one round's, its snapshot, inventory and plan
// agreeing on the online CPUs and its generation saying which machine
// it came from; generations never go back. Run with -race.
func TestReadersNeverSeeTwoRounds(t *testing.T) {
	roots := [2]state.Roots{machine(t, true), machine(t, false)}
	var rounds [2]state.Planned
	for i, r := range roots {
		p, err := state.Plan(r, config.Default(), nil, policy.Balancing{})
		if err != nil {
			t.Fatal(err)
		}
		rounds[i] = p
	}
	want := [2]cpumask.Mask{rounds[0].Snapshot.Online(), rounds[1].Snapshot.Online()}

	var store state.Store
	if store.Load() != nil {
		t.Fatal("empty store holds a state")
	}
	const publishes = 2000
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			var last uint64
			for {
				select {
				case <-stop:
					return
				default:
				}
				st := store.Load()
				if st == nil {
					continue
				}
				online := want[(st.Generation-1)%2]
				if !st.Snapshot.Online().Equal(online) || !st.Inventory.CPUs.Equal(online) || !st.Plan.Allowed.Equal(online) ||
					st.Doc().Generation != st.Generation || st.Doc().Allowed != online.String() {
					t.Errorf("generation %d mixes rounds: online %s, inventory %s, allowed %s", st.Generation,
						st.Snapshot.Online(), st.Inventory.CPUs, st.Plan.Allowed)
					return
				}
				if st.Generation < last {
					t.Errorf("generation went back from %d to %d", last, st.Generation)
					return
				}
				last = st.Generation
			}
		})
	}
	for i := range publishes {
		// Fresh plans every few rounds, so readers also race with
		// states whose parts were just built.
		p := rounds[i%2]
		if i%50 < 2 {
			var err error
			if p, err = state.Plan(roots[i%2], config.Default(), nil, policy.Balancing{}); err != nil {
				t.Error(err)
				break
			}
		}
		if st := store.Publish(&state.State{Planned: p}); st.Generation != uint64(i+1) {
			t.Fatalf("publish %d stamped generation %d", i+1, st.Generation)
		}
	}
	close(stop)
	wg.Wait()
}
