package topology_test

import (
	"sync"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/topology"
)

// TestHolderReadersNeverSeeHalfBuiltSnapshot swaps snapshots of two
// different machines in while readers check that every snapshot they
// load is wholly one machine or the other, and that generations never go
// backwards. Run with -race.
func TestHolderReadersNeverSeeHalfBuiltSnapshot(t *testing.T) {
	small := fakesys.New(t)
	small.AddMachine(fakesys.Machine{Online: "0-7", Nodes: []fakesys.Node{
		{ID: 0, CPUs: "0-3", Distance: []int{10, 20}},
		{ID: 1, CPUs: "4-7", Distance: []int{20, 10}},
	}})
	big := fakesys.New(t)
	big.AddMachine(seed4Node())
	trees := []topology.FS{topology.NewFS(small.Sys()), topology.NewFS(big.Sys())}

	var h topology.Holder
	if h.Load() != nil {
		t.Fatal("zero Holder holds a snapshot")
	}
	if _, err := h.Refresh(trees[0]); err != nil {
		t.Fatal(err)
	}

	const writers, readers, rounds = 2, 4, 60
	var wg sync.WaitGroup
	errs := make(chan string, readers*rounds*4)
	stop := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				if _, err := h.Refresh(trees[(i+w)%2]); err != nil {
					errs <- err.Error()
					return
				}
			}
		}()
	}
	var rg sync.WaitGroup
	for range readers {
		rg.Add(1)
		go func() {
			defer rg.Done()
			var last uint64
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := h.Load()
				if s.Generation() < last {
					errs <- "generation went backwards"
				}
				last = s.Generation()
				n, cpus := len(s.Nodes()), s.Online().Weight()
				consistent := (n == 2 && cpus == 8) || (n == 4 && cpus == 16)
				for _, node := range s.CPUNodes() {
					if len(s.Spread(node, s.Online())) != cpus || len(s.HopMasks(node)) != len(s.Levels()) {
						consistent = false
					}
				}
				if !consistent {
					errs <- "reader saw a mixed snapshot"
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if got := h.Load().Generation(); got != 1+writers*rounds {
		t.Errorf("final generation = %d, want %d", got, 1+writers*rounds)
	}
}

func TestPublishDoesNotModifyItsArgument(t *testing.T) {
	s := readMachine(t, seed4Node())
	var h topology.Holder
	p := h.Publish(s)
	if s.Generation() != 0 || p.Generation() != 1 || h.Load() != p {
		t.Errorf("generations: argument %d, published %d", s.Generation(), p.Generation())
	}
}
