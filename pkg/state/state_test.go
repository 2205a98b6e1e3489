package state_test

import (
	"sync"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
)

// machine is a fixture tree: the lab's 4-node guest with all 8 CPUs
// online, or with node 3's CPUs 6-7 offline, and a virtio NIC on node 2.
func roots(t *testing.T, cpus6and7 bool) machine.Roots {
	tr := fakesys.NewQEMUGuestNIC(t, cpus6and7)
	return machine.Roots{Sys: tr.Sys(), Proc: tr.Proc()}
}

// plan is a round's State without the writes: a whole read and its plan.
func plan(t *testing.T, r machine.Roots) state.State {
	t.Helper()
	cfg := config.Default()
	m, err := machine.Read(r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return state.State{Machine: m, Plan: policy.Compute(m.Snapshot, m.Inventory, cfg, nil, policy.Memory{}, policy.Balancing{})}
}

// TestReadersNeverSeeTwoRounds publishes rounds of two machines in turn
// (8 CPUs online, then 6) while readers load the newest State: every
// State a reader sees is one round's, its snapshot, inventory and plan
// agreeing on the online CPUs and its generation saying which machine
// it came from; generations never go back. Run with -race.
func TestReadersNeverSeeTwoRounds(t *testing.T) {
	rs := [2]machine.Roots{roots(t, true), roots(t, false)}
	var rounds [2]state.State
	for i, r := range rs {
		rounds[i] = plan(t, r)
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
		st := rounds[i%2]
		if i%50 < 2 {
			st = plan(t, rs[i%2])
		}
		if st := store.Publish(&st); st.Generation != uint64(i+1) {
			t.Fatalf("publish %d stamped generation %d", i+1, st.Generation)
		}
	}
	close(stop)
	wg.Wait()
}
