//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/netdev"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

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
	dev, gn, ok := readIdentity(r, "b", pci)
	if !ok {
		return
	}
	wantSource := "ethtool"
	idx := gn.Ifindex[dev.Interfaces[0]]
	for _, s := range gn.QStats {
		if s.Ifindex == idx {
			wantSource = "qstats"
		}
	}
	r.Check("b-load-source", dev.LoadSource == wantSource, "load_source %q, want %q (qstats-get: %d entries for %s, error %q)",
		dev.LoadSource, wantSource, len(gn.QStats), dev.Interfaces[0], gn.QStatsErr)
	checkIdentity(r, "b", dev, gn)
}

// readIdentity parses PREFIX-plan (/plan) and PREFIX-netdev (guestcheck
// netdev) and returns the device at pci, which must have one interface.
func readIdentity(r *Result, prefix, pci string) (policy.Device, guestinfo.NetdevReport, bool) {
	var doc policy.Doc
	var gn guestinfo.NetdevReport
	pd, okP := r.Data(prefix + "-plan")
	nd, okN := r.Data(prefix + "-netdev")
	if !r.Check(prefix+"-id-data", okP && okN && pd.RC == 0 && nd.RC == 0, "/plan and guestcheck netdev: present %v %v", okP, okN) {
		return policy.Device{}, gn, false
	}
	errP, errN := json.Unmarshal(pd.Output, &doc), json.Unmarshal(nd.Output, &gn)
	if !r.Check(prefix+"-id-parsed", errP == nil && errN == nil, "/plan: %v; netdev: %v", errP, errN) {
		return policy.Device{}, gn, false
	}
	i := slices.IndexFunc(doc.Devices, func(d policy.Device) bool { return d.PCI == pci })
	if !r.Check(prefix+"-id-device", i >= 0 && len(doc.Devices[i].Interfaces) == 1, "device %s in /plan with one interface", pci) {
		return policy.Device{}, gn, false
	}
	return doc.Devices[i], gn, true
}

// checkIdentity checks the queue IRQs of dev, a device of /plan, against
// gn, the guest kernel's netdev view, and returns how many of its IRQs
// netlink links to a queue. Checks are named PREFIX-id-...
func checkIdentity(r *Result, prefix string, dev policy.Device, gn guestinfo.NetdevReport) (linkedIRQs int) {
	iface := dev.Interfaces[0]
	idx := gn.Ifindex[iface]
	byIRQ := map[int]policy.IRQ{}
	planned := map[int]bool{}
	for _, q := range dev.IRQs {
		if q.Role == policy.RoleQueue && q.Queue >= 0 {
			planned[q.Queue] = true
			byIRQ[q.Number] = q
		}
	}
	if gn.QueuesErr != "" {
		// No queue-get (before 6.8): the names decide every queue.
		r.Check(prefix+"-id-by-name", allFrom(byIRQ, policy.QueueFromName), "queue-get unavailable (%s): every queue IRQ by name: %v", gn.QueuesErr, sources(byIRQ))
		return 0
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
	r.Check(prefix+"-id-queues", sameSet(rx, planned) && sameSet(tx, planned), "queue-get: rx %v tx %v; the plan's queues %v",
		setOf(rx), setOf(tx), setOf(planned))
	bad := []string{}
	for irq, q := range byIRQ {
		want, source := -1, policy.QueueFromName
		if id, ok := linked[irq]; ok {
			want, source = id, policy.QueueFromNetlink
		}
		if q.QueueSource != source || (want >= 0 && q.Queue != want) {
			bad = append(bad, fmt.Sprintf("IRQ %d %s: queue %d from %q, want from %q", irq, q.Name, q.Queue, q.QueueSource, source))
		}
	}
	for irq, id := range linked {
		if _, ok := byIRQ[irq]; !ok {
			bad = append(bad, fmt.Sprintf("IRQ %d: netlink links queue %d, the plan has no such queue IRQ", irq, id))
		}
	}
	r.Check(prefix+"-id-source", len(bad) == 0, "netlink links %d of %s's queue IRQs (NAPIs with an IRQ: %d of %d); %v",
		len(linked), iface, len(irqOf), len(gn.NAPIs), bad)
	return len(linked)
}

func allFrom(byIRQ map[int]policy.IRQ, source string) bool {
	for _, q := range byIRQ {
		if q.QueueSource != source {
			return false
		}
	}
	return len(byIRQ) > 0
}

func sources(byIRQ map[int]policy.IRQ) map[int]string {
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

// netlinkScript brings the NIC up (e1000e requests its vectors when the
// interface opens), runs numairqd until its first round is done and
// keeps /plan and the kernel's netdev view.
const netlinkScript = `
ip link set lo up
IF=$(ls /sys/bus/pci/devices/$ADDR/net/ | head -n 1)
ip link set "$IF" up
start_daemon --config "$CFG"
if wait_healthy "$DEADLINE_S"; then pass n-healthy "/healthz 200"; else fail n-healthy "no healthy round in $DEADLINE_S s"; fi
data n-plan wget -qO- "$URL/plan"
data n-netdev guestcheck netdev
data n-interrupts cat /proc/interrupts
alive n-alive
stop_daemon n-stop
`

// netlinkSince is the first kernel whose e1000e links its queues to a
// NAPI with the rx vector's IRQ (netif_queue_set_napi and
// netif_napi_set_irq in e1000_open: "e1000e: Link NAPI instances to
// queues and IRQs", 6.14). Debian 13's backports kernel has it.
var netlinkSince = [2]int{6, 14}

// TestNetlinkQueues boots an e1000e on node 2 of the 4-node guest and
// checks the plan's queue IRQs against what the guest kernel's netdev
// netlink says (checkIdentity): on a kernel with the link, the rx
// vector is planned as queue 0 from netlink and the tx vector by its
// name; on 6.1 and 6.12 both by name. run.sh runs it on Debian 12's two
// kernels with the rest, and on Debian 13's backports kernel with
// TestCapturePlan only.
func TestNetlinkQueues(t *testing.T) {
	g := FourNodeGuest()
	g.Net = []NetDevice{{Node: 2, Queues: 1, Model: "e1000e"}}
	g.NVMe = nil
	addr := g.NetAddress(0)
	Run(t, Scenario{
		Name:    "netlink-e1000e",
		Guest:   g,
		Script:  daemonScript(addr, netlinkScript),
		Files:   map[string][]byte{"/etc/numairqd/numairqd.yaml": []byte("listen: \"127.0.0.1:9768\"\n")},
		Timeout: 180 * time.Second,
		Expect:  []string{"n-healthy", "n-alive", "n-stop"},
		Verify: func(t *testing.T, r *Result) {
			dev, gn, ok := readIdentity(r, "n", addr)
			if !ok {
				return
			}
			linked := checkIdentity(r, "n", dev, gn)
			ver := kernelVersion(requireEnv(t).kernel)
			if !r.Check("n-kernel-version", ver[0] > 0, "kernel version of %s: %d.%d", requireEnv(t).kernel, ver[0], ver[1]) {
				return
			}
			if ver[0] > netlinkSince[0] || ver[0] == netlinkSince[0] && ver[1] >= netlinkSince[1] {
				r.Check("n-id-linked", linked >= 1, "kernel %d.%d: netlink links %d of e1000e's IRQs to its queue, want at least 1", ver[0], ver[1], linked)
			}
			if t.Failed() {
				dumpDaemonLog(t, r)
			}
		},
	})
}

// kernelVersion is the major and minor of a /boot/vmlinuz-6.12.118+deb12-amd64
// or .../modules/7.3.4+deb13-amd64/vmlinuz path; 0.0 when neither.
func kernelVersion(path string) [2]int {
	for _, part := range []string{filepath.Base(path), filepath.Base(filepath.Dir(path))} {
		part = strings.TrimPrefix(part, "vmlinuz-")
		var v [2]int
		if n, _ := fmt.Sscanf(part, "%d.%d", &v[0], &v[1]); n == 2 {
			return v
		}
	}
	return [2]int{}
}
