package daemon

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/netdev"
	"github.com/numairqd/numairqd/pkg/policy"
)

// netdevSays is an inventory.Netdev whose NAPI K has IRQ irqs[K] and
// serves rx and tx queue K of ifindex 2 (the fixture's eth0).
type netdevSays struct{ irqs []int }

func (n netdevSays) Queues() ([]netdev.Queue, error) {
	var qs []netdev.Queue
	for k := range n.irqs {
		qs = append(qs, netdev.Queue{Ifindex: 2, Type: netdev.QueueRX, ID: k, NAPI: 100 + k},
			netdev.Queue{Ifindex: 2, Type: netdev.QueueTX, ID: k, NAPI: 100 + k})
	}
	return qs, nil
}

func (n netdevSays) NAPIs() ([]netdev.NAPI, error) {
	var ns []netdev.NAPI
	for k, irq := range n.irqs {
		ns = append(ns, netdev.NAPI{Ifindex: 2, ID: 100 + k, IRQ: irq, PID: -1})
	}
	return ns, nil
}

// TestNetlinkQueuesWin: netdev netlink says the NAPI of queue 0 has IRQ
// 27 (named input.1) and queue 1's has IRQ 25 (input.0), as after a
// driver that renumbered its vectors. The plan follows netlink: IRQ 27
// is queue 0 and takes queue 0's CPU, and says where that came from;
// the disagreement is warned of once, not every round.
func TestNetlinkQueuesWin(t *testing.T) {
	tree := fixture(t)
	w := &fileWriter{proc: tree.Proc()}
	core, logs := observer.New(zap.InfoLevel)
	d := newDaemon(t, tree, w, "", func(o *Options) { o.Netdev, o.Log = netdevSays{irqs: []int{27, 25}}, zap.New(core) })
	for range 3 {
		if _, err := d.Round(context.Background(), "resync", inventory.DepthAll, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	q25, q27, q29 := planIRQ(t, d, 25), planIRQ(t, d, 27), planIRQ(t, d, 29)
	queue := func(q policy.IRQ) int { return q.Queue }
	if queue(q27) != 0 || q27.QueueSource != policy.QueueFromNetlink || q27.QueueNote == "" {
		t.Errorf("IRQ 27: queue %d from %q, note %q; want queue 0 from netlink, with a note", queue(q27), q27.QueueSource, q27.QueueNote)
	}
	if queue(q25) != 1 || q25.QueueSource != policy.QueueFromNetlink {
		t.Errorf("IRQ 25: queue %d from %q; want 1 from netlink", queue(q25), q25.QueueSource)
	}
	if queue(q29) != 2 || q29.QueueSource != policy.QueueFromName || q29.QueueNote != "" {
		t.Errorf("IRQ 29 (input.2, not linked): queue %d from %q, note %q; want 2 from its name", queue(q29), q29.QueueSource, q29.QueueNote)
	}
	// Queue 0's CPU (node 2's first) goes to IRQ 27 with queue 0's tx
	// IRQ 26 (output.0, by name).
	if got := affinity(t, tree, 27); got != node2Spread[0] {
		t.Errorf("IRQ 27 on %s, want queue 0's CPU %s", got, node2Spread[0])
	}
	if n := logs.FilterMessageSnippet("disagree on its queue").Len(); n != 2 {
		t.Errorf("%d disagreement warnings over 3 rounds, want 2 (IRQs 25 and 27, once each)", n)
	}
}
