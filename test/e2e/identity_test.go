//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/numairqd/numairqd/pkg/netdev"
	"github.com/numairqd/numairqd/pkg/policy"
)

// guestNetdev is what `guestcheck netdev` printed: the netdev family's
// queues, NAPIs and per-queue stats in the guest, or why not.
type guestNetdev struct {
	Ifindex   map[string]int `json:"ifindex"`
	Queues    []netdev.Queue `json:"queues"`
	QueuesErr string         `json:"queues_error"`
	NAPIs     []netdev.NAPI  `json:"napis"`
	QStats    []netdev.Stats `json:"qstats"`
	QStatsErr string         `json:"qstats_error"`
}

// verifyQueueIdentity checks the daemon's /plan (b-plan) against what
// the guest's kernel says of the NIC at pci (b-netdev), on whichever
// kernel booted:
//   - where queue-get answers (6.8+), its rx and tx queue ids of the
//     interface are the plan's queue indices of the device;
//   - a queue IRQ is planned from netlink exactly where queue-get links
//     its queue to a NAPI and napi-get gives that NAPI this IRQ, with
//     netlink's queue id, and from its name elsewhere (on 6.1 and 6.12
//     virtio-net links none: every IRQ by name, which the check says);
//   - balance: load weighed the queues by qstats-get where the kernel
//     gives per-queue stats for the interface (6.10+ virtio-net), else
//     by ethtool -S (6.1's virtio-net names its per-queue counters).
func verifyQueueIdentity(t *testing.T, r *Result, pci string) {
	t.Helper()
	pd, okP := r.Data("b-plan")
	nd, okN := r.Data("b-netdev")
	if !r.Check("b-id-data", okP && okN && pd.RC == 0 && nd.RC == 0, "/plan and guestcheck netdev: present %v %v", okP, okN) {
		return
	}
	var doc policy.Doc
	var gn guestNetdev
	errP, errN := json.Unmarshal(pd.Output, &doc), json.Unmarshal(nd.Output, &gn)
	if !r.Check("b-id-parsed", errP == nil && errN == nil, "/plan: %v; netdev: %v", errP, errN) {
		return
	}
	i := slices.IndexFunc(doc.Devices, func(d policy.DeviceDoc) bool { return d.PCI == pci })
	if !r.Check("b-id-device", i >= 0 && len(doc.Devices[i].Interfaces) == 1, "device %s in /plan with one interface", pci) {
		return
	}
	dev := doc.Devices[i]
	iface := dev.Interfaces[0]
	planned := map[int]bool{}
	byIRQ := map[int]policy.IRQDoc{}
	for _, q := range dev.IRQs {
		if q.Role == "queue" && q.Queue != nil {
			planned[*q.Queue] = true
			byIRQ[q.IRQ] = q
		}
	}

	wantSource := "ethtool"
	idx := gn.Ifindex[iface]
	for _, s := range gn.QStats {
		if s.Ifindex == idx {
			wantSource = "qstats"
		}
	}
	r.Check("b-load-source", dev.LoadSource == wantSource, "load_source %q, want %q (qstats-get: %d entries for %s, error %q)",
		dev.LoadSource, wantSource, len(gn.QStats), iface, gn.QStatsErr)

	if gn.QueuesErr != "" {
		// No queue-get (before 6.8): the names decide every queue.
		r.Check("b-id-by-name", allFrom(byIRQ, policy.QueueFromName), "queue-get unavailable (%s): every queue IRQ by name: %v", gn.QueuesErr, sources(byIRQ))
		return
	}
	rx, tx := map[int]bool{}, map[int]bool{}
	linked := map[int]int{} // IRQ -> queue id netlink links it to
	irqOf := map[int]int{}
	for _, n := range gn.NAPIs {
		if n.Ifindex == idx && n.IRQ >= 0 {
			irqOf[n.ID] = n.IRQ
		}
	}
	for _, q := range gn.Queues {
		if q.Ifindex != idx {
			continue
		}
		switch q.Type {
		case netdev.QueueRX:
			rx[q.ID] = true
		case netdev.QueueTX:
			tx[q.ID] = true
		}
		if irq, ok := irqOf[q.NAPI]; ok && q.NAPI >= 0 {
			if prev, seen := linked[irq]; !seen || q.ID < prev {
				linked[irq] = q.ID
			}
		}
	}
	r.Check("b-id-queues", sameSet(rx, planned) && sameSet(tx, planned), "queue-get: rx %v tx %v; the plan's queues %v",
		setOf(rx), setOf(tx), setOf(planned))
	bad := []string{}
	for irq, q := range byIRQ {
		want, source := -1, policy.QueueFromName
		if id, ok := linked[irq]; ok {
			want, source = id, policy.QueueFromNetlink
		}
		if q.QueueSource != source || (want >= 0 && *q.Queue != want) {
			bad = append(bad, fmt.Sprintf("IRQ %d %s: queue %d from %q, want from %q", irq, q.Name, *q.Queue, q.QueueSource, source))
		}
	}
	r.Check("b-id-source", len(bad) == 0, "netlink links %d of %s's queue IRQs (NAPIs with an IRQ: %d of %d); %v",
		len(linked), iface, len(irqOf), len(gn.NAPIs), bad)
}

func allFrom(byIRQ map[int]policy.IRQDoc, source string) bool {
	for _, q := range byIRQ {
		if q.QueueSource != source {
			return false
		}
	}
	return len(byIRQ) > 0
}

func sources(byIRQ map[int]policy.IRQDoc) map[int]string {
	out := map[int]string{}
	for irq, q := range byIRQ {
		out[irq] = q.QueueSource
	}
	return out
}

func sameSet(a, b map[int]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func setOf(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
