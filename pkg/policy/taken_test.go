package policy

import (
	"fmt"
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// TestTakenIsBounded: past maxTaken other devices, the rest share one
// entry, so the lists grow with the devices, not their square.
func TestTakenIsBounded(t *testing.T) {
	pl := &planner{}
	var devs []Device
	for i := range maxTaken + 5 {
		devs = append(devs, Device{PCI: fmt.Sprintf("0000:%02x:00.0", i)})
		pl.work = append(pl.work, deviceWork{took: cpumask.New(i % 4)})
	}
	pl.work[maxTaken+4].took = cpumask.New(9) // not among the CPUs asked about
	got := pl.takenOf(0, devs, cpumask.New(0, 1, 2, 3))
	if len(got) != maxTaken+1 {
		t.Fatalf("%d entries, want %d: %+v", len(got), maxTaken+1, got)
	}
	if got[0].Device != "0000:01:00.0" {
		t.Errorf("first entry %+v, want the device itself left out", got[0])
	}
	if last := got[maxTaken]; last.Device != "3 more devices" || last.CPUs.String() != "1-3" {
		t.Errorf("last entry %+v, want 3 more devices on 1-3", last)
	}
}
