package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
)

// TestRoundsPinNAPIThreads: threaded NAPI turned on between rounds (no
// event tells) is caught by the next round, here the resync; a thread
// the kernel reset (all its CPUs went offline and came back) is pinned
// again by the cheapest round a CPU event triggers.
func TestRoundsPinNAPIThreads(t *testing.T) {
	tree := fixture(t)
	w := &fileWriter{proc: tree.Proc()}
	d := newDaemon(t, tree, w, "", nil)
	st, err := d.Round(context.Background(), "startup", inventory.DepthAll, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Apply.NAPIByKind) != 0 || w.pins != 0 {
		t.Fatalf("threaded off: NAPI outcomes %v, %d pins", st.Apply.NAPIByKind, w.pins)
	}
	all := cpumask.New(0, 1, 2, 3, 4, 5, 6, 7)
	threads, rx, tx := fakesys.VirtioNAPIThreads("eth0", 6, 8193, 800, all)
	tree.AddNAPIThreads("eth0", threads...)
	st, err = d.Round(context.Background(), "resync", inventory.DepthAll, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Apply.NAPIWritten != 12 {
		t.Fatalf("resync after threaded on pinned %d threads (%v), want 12", st.Apply.NAPIWritten, st.Apply.NAPIByKind)
	}
	// Each thread is on its queue's IRQ: input.k (25+2k) for RX,
	// output.k (26+2k) for TX.
	for k := range 6 {
		for _, c := range []struct{ pid, irq int }{{rx[k], 25 + 2*k}, {tx[k], 26 + 2*k}} {
			if got, want := tree.NAPIThreadAllowed(c.pid).String(), affinity(t, tree, c.irq); got != want {
				t.Errorf("pid %d on %s, want IRQ %d's %s", c.pid, got, c.irq, want)
			}
		}
	}
	tree.WriteNAPIThread(fakesys.NAPIThread{PID: rx[2], Comm: "napi/eth0-8195", Allowed: all})
	st, err = d.Round(context.Background(), "uevent", inventory.DepthAffinities, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Depth != inventory.DepthAffinities || st.Apply.NAPIWritten != 1 {
		t.Errorf("round read %v and pinned %d threads, want affinities and 1", st.Depth, st.Apply.NAPIWritten)
	}
	if got, want := tree.NAPIThreadAllowed(rx[2]).String(), affinity(t, tree, 29); got != want {
		t.Errorf("reset RX 2 on %s, want IRQ 29's %s", got, want)
	}
}
