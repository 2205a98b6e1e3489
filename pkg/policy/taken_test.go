package policy

import (
	"fmt"
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// TestTakenIsBounded: past maxTaken earlier devices, the rest share one
// entry, so the lists grow with the devices, not their square.
func TestTakenIsBounded(t *testing.T) {
	pl := &planner{}
	for i := range maxTaken + 4 {
		pl.took = append(pl.took, Taken{Device: fmt.Sprintf("0000:%02x:00.0", i), CPUs: cpumask.New(i % 4)})
	}
	pl.took = append(pl.took, Taken{Device: "0000:ff:00.0", CPUs: cpumask.New(9)}) // not among the busier CPUs
	got := pl.takenOf(cpumask.New(0, 1, 2, 3))
	if len(got) != maxTaken+1 {
		t.Fatalf("%d entries, want %d: %+v", len(got), maxTaken+1, got)
	}
	if last := got[maxTaken]; last.Device != "4 more devices" || last.CPUs.String() != "0-3" {
		t.Errorf("last entry %+v, want 4 more devices on 0-3", last)
	}
}
