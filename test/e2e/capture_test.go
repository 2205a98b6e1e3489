//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/policy"
)

// captureScript brings every NIC up (e1000e requests its vectors when
// its interface opens), starts the daemon, waits until its plan is in
// place on every device and holds, then captures the guest, sending
// the daemon's /plan before and after and the archive.
const captureScript = `
ip link set lo up
for a in @NICS@; do
	ip link set "$(ls /sys/bus/pci/devices/$a/net/ | head -n 1)" up
done
start_daemon --config "$CFG"
if wait_healthy "$DEADLINE_S"; then pass c-healthy "/healthz 200"; else fail c-healthy "no healthy round in $DEADLINE_S s"; fi
check c-settled guestcheck wait-plan -url "$URL/plan" @PCIS@ -after 0 -timeout "${DEADLINE_S}s" -hold 2s
data c-plan-before wget -qO- "$URL/plan"
T1=$(uptime_s)
if numairqd capture -o /tmp/capture.tar.gz --config "$CFG" >/tmp/capture.out 2>&1; then
	metric capture_guest_ms "$(echo "$(uptime_s) $T1" | awk '{ printf "%d", ($1 - $2) * 1000 }')"
	metric capture_guest_bytes "$(wc -c </tmp/capture.tar.gz)"
	pass c-capture "$(tr '\n' ' ' </tmp/capture.out)"
else
	fail c-capture "exit $?: $(tr '\n' ' ' </tmp/capture.out)"
fi
data c-plan-after wget -qO- "$URL/plan"
data c-archive cat /tmp/capture.tar.gz
data c-netdev guestcheck netdev
alive c-alive
stop_daemon c-stop
data daemon-log cat "$LOG"
`

// captureGuest is FourNodeGuest with an e1000e on node 3, whose queue
// a kernel that links it (netlinkSince) names over netdev netlink.
func captureGuest() Guest {
	g := FourNodeGuest()
	g.Net = append(g.Net, NetDevice{Node: 3, Queues: 1, Model: "e1000e"})
	return g
}

// TestCapturePlan takes a capture in the 4-node guest while the daemon
// runs there, plans it on the host (numairqd plan --capture) and checks
// that the placement is the daemon's /plan: every IRQ's queue, role and
// planned CPUs, every tx queue's planned XPS CPUs. On a kernel whose
// e1000e links its queue (netlinkSince) the host's plan must take that
// queue from netlink, that is from the answers recorded in the capture.
// run.sh runs it with the rest and again on Debian 13's backports kernel.
func TestCapturePlan(t *testing.T) {
	g := captureGuest()
	var nics, pcis []string
	for i := range g.Net {
		nics = append(nics, g.NetAddress(i))
		pcis = append(pcis, "-pci "+g.NetAddress(i))
	}
	for i := range g.NVMe {
		pcis = append(pcis, "-pci "+g.NVMeAddress(i))
	}
	script := strings.NewReplacer("@NICS@", strings.Join(nics, " "), "@PCIS@", strings.Join(pcis, " ")).Replace(captureScript)
	Run(t, Scenario{
		Name:    "capture",
		Guest:   g,
		Script:  daemonScript(g.NetAddress(0), script),
		Files:   map[string][]byte{"/etc/numairqd/numairqd.yaml": []byte("listen: \"127.0.0.1:9768\"\n")},
		Timeout: 240 * time.Second,
		Expect:  []string{"c-healthy", "c-settled", "c-capture", "c-alive", "c-stop"},
		Verify: func(t *testing.T, r *Result) {
			verifyCapturePlan(t, r, g.NetAddress(len(g.Net)-1))
			if t.Failed() {
				dumpDaemonLog(t, r)
			}
		},
	})
}

// verifyCapturePlan plans the guest's capture on the host and compares
// it with the daemon's /plan, which must not have changed while the
// capture was taken; e1000e is the PCI address of the e1000e.
func verifyCapturePlan(t *testing.T, r *Result, e1000e string) {
	before, okB := r.Data("c-plan-before")
	after, okA := r.Data("c-plan-after")
	archive, okC := r.Data("c-archive")
	if !r.Check("c-data", okB && okA && okC && before.RC == 0 && after.RC == 0 && archive.RC == 0,
		"/plan before and after and the archive: present %v %v %v, exit status %d %d %d", okB, okA, okC, before.RC, after.RC, archive.RC) {
		return
	}
	daemonBefore, errB := placementOf(before.Output)
	daemon, errA := placementOf(after.Output)
	if !r.Check("c-daemon-plan", errB == nil && errA == nil, "/plan: %v %v", errB, errA) {
		return
	}
	r.Check("c-daemon-steady", diffPlacement(daemonBefore, daemon) == "none", "the daemon's plan before the capture against after: %s", diffPlacement(daemonBefore, daemon))

	path := filepath.Join(t.TempDir(), "guest.tar.gz")
	if err := os.WriteFile(path, archive.Output, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.Command(buildBinaries(t).guest["numairqd"], "plan", "--capture", path, "--format", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r.Metric("capture_host_plan_ms", time.Since(start).Milliseconds())
	if !r.Check("c-host-plan", err == nil, "numairqd plan --capture of %d bytes: error %v %s", len(archive.Output), err, stderr.String()) {
		return
	}
	host, err := placementOf(stdout.Bytes())
	if !r.Check("c-host-plan-parsed", err == nil, "%v", err) {
		return
	}
	r.Check("c-same-placement", len(host.irqs) > 0 && diffPlacement(host, daemon) == "none",
		"%d IRQs, %d tx queues; the differences of the host's plan of the capture from the daemon's /plan: %s", len(host.irqs), len(host.txqs), diffPlacement(host, daemon))
	r.Check("c-xps-planned", len(host.txqs) > 0, "tx queues in the plan: %d", len(host.txqs))

	ver := kernelVersion(requireEnv(t).kernel)
	if ver[0] > netlinkSince[0] || ver[0] == netlinkSince[0] && ver[1] >= netlinkSince[1] {
		linked := 0
		for _, q := range host.irqs {
			if strings.HasPrefix(q, e1000e+" ") && strings.Contains(q, `from "netlink"`) {
				linked++
			}
		}
		r.Check("c-netlink-replayed", linked >= 1, "kernel %d.%d: the host's plan takes %d of the e1000e's queue IRQs from the recorded netlink answers, want at least 1", ver[0], ver[1], linked)
	}
}

// capturePlacement is what a plan decides: each IRQ's device, role,
// queue (with where it came from) and planned CPUs; each tx queue's
// planned XPS CPUs.
type capturePlacement struct {
	irqs map[int]string
	txqs map[string]string
}

func placementOf(doc []byte) (capturePlacement, error) {
	var d policy.Doc
	if err := json.Unmarshal(doc, &d); err != nil || d.Plan == nil {
		return capturePlacement{}, fmt.Errorf("plan JSON: %v (%d bytes)", err, len(doc))
	}
	p := capturePlacement{irqs: map[int]string{}, txqs: map[string]string{}}
	for _, dev := range d.Devices {
		for _, q := range dev.IRQs {
			p.irqs[q.Number] = fmt.Sprintf("%s %s %s queue %d from %q planned %q", dev.PCI, q.Name, q.Role, q.Queue, q.QueueSource, q.Planned)
		}
		for _, tq := range dev.TxQueues {
			p.txqs[fmt.Sprintf("%s %s tx-%d", dev.PCI, tq.Interface, tq.Queue)] = fmt.Sprintf("planned %q", tq.Planned)
		}
	}
	return p, nil
}

// diffPlacement lists where got and want differ, "none" for nowhere.
func diffPlacement(got, want capturePlacement) string {
	var out []string
	irqs, txqs := maps.Clone(got.irqs), maps.Clone(got.txqs)
	maps.Copy(irqs, want.irqs)
	maps.Copy(txqs, want.txqs)
	for _, irq := range slices.Sorted(maps.Keys(irqs)) {
		if got.irqs[irq] != want.irqs[irq] {
			out = append(out, fmt.Sprintf("IRQ %d: %q, want %q", irq, got.irqs[irq], want.irqs[irq]))
		}
	}
	for _, q := range slices.Sorted(maps.Keys(txqs)) {
		if got.txqs[q] != want.txqs[q] {
			out = append(out, fmt.Sprintf("%s: %q, want %q", q, got.txqs[q], want.txqs[q]))
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}
