package daemon

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
)

// txMaps reads eth0's six xps_cpus files of the fixture's NIC.
func txMaps(t *testing.T, tree *fakesys.Tree) []string {
	t.Helper()
	out := make([]string, 6)
	for k := range out {
		out[k] = tree.TxQueueXPS("eth0", k).String()
	}
	return out
}

// TestRoundRestoresXPSAfterDriverReset: virtio-net rewrites every XPS
// map on a CPU online or dead event; the round that event triggers,
// even the cheapest (affinities only), reads the maps again and puts
// the plan's back.
func TestRoundRestoresXPSAfterDriverReset(t *testing.T) {
	tree := fixture(t)
	driver := txMaps(t, tree)
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, "", nil)
	st, err := d.Round(context.Background(), "startup", inventory.DepthAll, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	planned := txMaps(t, tree)
	if want := []string{"4", "5", "6", "7", "0,2", "1,3"}; !slices.Equal(planned, want) || st.Apply.XPSWritten != 6 {
		t.Fatalf("after the first round XPS maps %q (%d written), want %q", planned, st.Apply.XPSWritten, want)
	}
	for k, m := range fakesys.VirtioXPS(cpumask.New(0, 1, 2, 3, 4, 5, 6, 7), 6) {
		tree.WriteFile("sys/class/net/eth0/queues/tx-"+strconv.Itoa(k)+"/xps_cpus", m.Hex(8)+"\n")
	}
	if got := txMaps(t, tree); !slices.Equal(got, driver) {
		t.Fatalf("the driver's reset left %q, want %q", got, driver)
	}
	st, err = d.Round(context.Background(), "uevent", inventory.DepthAffinities, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Depth != inventory.DepthAffinities || st.Apply.XPSWritten != 6 {
		t.Errorf("round read %v and wrote %d XPS maps, want affinities and 6", st.Depth, st.Apply.XPSWritten)
	}
	if got := txMaps(t, tree); !slices.Equal(got, planned) {
		t.Errorf("after the round XPS maps %q, want the plan's %q", got, planned)
	}
}
