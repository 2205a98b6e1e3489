//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// The traffic scenario checks what numairqd is for: with packets
// flowing, every busy queue IRQ fires on the CPU of its plan, and the
// plan holds. The guest starts from a stacked placement (every queue
// IRQ on CPU 0, as a balancer that packs queues leaves it), starts
// numairqd, asks the host for traffic (64 UDP flows, spread over the rx
// queues by the tap's flow hash) and samples /proc/interrupts,
// /proc/stat and /proc/softirqs over a window.

const trafficScript = `
ip link set lo up
IF=$(ls /sys/bus/pci/devices/$ADDR/virtio*/net/ | head -n 1)
# The guest sends nothing (no IPv6 router solicitations): the tx queue
# IRQs stay quiet and the only frames are the generator's.
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
echo 1 >"/proc/sys/net/ipv6/conf/$IF/disable_ipv6"
ip link set "$IF" up
if [ @COMBINED@ -gt 0 ]; then
	check t-channels ethtool -L "$IF" combined @COMBINED@
fi
for irq in $(guestcheck irqs '^virtio[0-9]+-(input|output)\.[0-9]+$'); do
	echo 0 >/proc/irq/$irq/smp_affinity_list
done
data t-before guestcheck state
start_daemon
wp t-placed t_startup_to_placed_ms -since "$T0" -queues "@ALL_Q@" -control "@ALL_C@" -hold 500ms
traffic 0 @FLOWS@ @RATE@ @SECONDS@
if wait_for "$DEADLINE_S" rx_flowing "$IF"; then
	pass t-traffic-flows "rx_packets of $IF rising"
else
	fail t-traffic-flows "no packet on $IF $DEADLINE_S s after asking for traffic"
fi
data t-samples guestcheck sample -interval @INTERVAL@ -count @COUNT@ -iface "$IF"
data t-plan wget -q -O - "$URL/plan"
data t-metrics sh -c "wget -q -O - $URL/metrics | grep -E '^numairqd_(rounds_total|irqs_effective_pending|irqs)[{ ]'"
wp t-held t_held_ms -queues "@ALL_Q@" -control "@ALL_C@" -hold 0
alive t-alive
stop_daemon t-stop
data daemon-log cat "$LOG"
`

// The workload: even flows at a rate the TCG guest receives without
// drops on this lab's 2 cores (it takes about 45k frames/s); the
// generator runs longer than the guest needs and is stopped when the
// guest powers off.
const (
	trafficFlows    = 64
	trafficRate     = 20000
	trafficSeconds  = 60
	trafficInterval = 2 * time.Second
	trafficSamples  = 6
	// onPlanShare is the least share of a busy queue IRQ's interrupts
	// that must fire on its planned CPU.
	onPlanShare = 0.95
)

func TestTraffic(t *testing.T) {
	t.Run("numa4", func(t *testing.T) { runTraffic(t, FourNodeGuest(), 0) })
	// All 8 pairs enabled on 4 vCPUs: queues outnumber CPUs (linear).
	t.Run("mana", func(t *testing.T) { runTraffic(t, MANAGuest(), 8) })
}

// runTraffic boots g with numairqd and traffic on Net[0]; combined > 0
// enables that many queue pairs with ethtool -L first.
func runTraffic(t *testing.T, g Guest, combined int) {
	addr := g.NetAddress(0)
	want := g.NetPlacement(0, allCPUs(g.NumCPUs()))
	script := strings.NewReplacer(
		"@ALL_Q@", want.QueueArg(), "@ALL_C@", want.ControlList(), "@COMBINED@", strconv.Itoa(combined),
		"@FLOWS@", strconv.Itoa(trafficFlows), "@RATE@", strconv.Itoa(trafficRate), "@SECONDS@", strconv.Itoa(trafficSeconds),
		"@INTERVAL@", trafficInterval.String(), "@COUNT@", strconv.Itoa(trafficSamples),
	).Replace(trafficScript)
	enabled := min(g.Net[0].Queues, g.NumCPUs())
	if combined > 0 {
		enabled = combined
	}
	expect := []string{"t-placed", "t-traffic-flows", "t-held", "t-alive", "t-stop"}
	if combined > 0 {
		expect = append(expect, "t-channels")
	}
	Run(t, Scenario{
		Name:    "traffic-" + strings.TrimPrefix(t.Name(), "TestTraffic/"),
		Guest:   g,
		Script:  daemonScript(addr, script),
		Timeout: 180 * time.Second,
		Expect:  expect,
		Verify: func(t *testing.T, r *Result) {
			verifyTraffic(t, r, g, want, enabled)
			if t.Failed() {
				dumpDaemonLog(t, r)
			}
		},
	})
}

var rxQueueName = regexp.MustCompile(`^virtio\d+-input\.(\d+)$`)

func verifyTraffic(t *testing.T, r *Result, g Guest, want Placement, enabled int) {
	verifyLabNet(r, g)
	d, ok := r.Data("t-samples")
	if !r.Check("t-samples-data", ok && d.RC == 0, "guestcheck sample: present %v, exit %d", ok, d.RC) {
		return
	}
	samples, err := guestinfo.ParseLoadSamples(strings.NewReader(string(d.Output)))
	if !r.Check("t-samples-parsed", err == nil && len(samples) == trafficSamples, "%d samples, want %d: %v", len(samples), trafficSamples, err) {
		return
	}
	w, err := guestinfo.LoadSeries(samples)
	if !r.Check("t-window", err == nil && w.RxPPS > 0, "%.1f s window, %.0f rx packets/s, %.0f drops/s: %v", w.Seconds, w.RxPPS, w.DropsPS, err) {
		return
	}
	r.Metric("t_rx_pps", w.RxPPS)
	r.Metric("t_drops_ps", w.DropsPS)
	for _, c := range w.CPUs {
		r.Metric(fmt.Sprintf("t_cpu%d_soft_pct", c.CPU), c.SoftPct)
	}
	mx, mean := w.SoftPct(cpumask.New(allCPUs(len(w.CPUs))...))
	if mean > 0 {
		r.Metric("t_soft_max_over_mean", mx/mean)
	}

	busy := w.Busy(func(q guestinfo.IRQWindow) bool { return rxQueueName.MatchString(q.Actions[0]) })
	var off []string
	for _, q := range busy {
		k, ok := queueOf(q.Actions[0])
		if !ok || k >= len(want.Queues) {
			off = append(off, fmt.Sprintf("irq %d %s: not a queue of the plan", q.Number, q.Actions[0]))
			continue
		}
		cpu := want.Queues[k]
		share := q.Share(cpumask.New(cpu))
		r.Metric(fmt.Sprintf("t_irq%d_%s_share_on_cpu%d", q.Number, q.Actions[0], cpu), share)
		if share < onPlanShare {
			off = append(off, fmt.Sprintf("irq %d %s: %.1f%% of %d on cpu %d (per CPU %v, effective %s)",
				q.Number, q.Actions[0], 100*share, q.Total, cpu, q.Counts, q.Effective))
		}
	}
	r.Check("t-busy-queues", 2*len(busy) >= enabled, "%d of %d enabled rx queues busy (at least %.0f%% of the rx interrupts each)", len(busy), enabled, 100*guestinfo.BusyShare)
	r.Check("t-on-plan", len(off) == 0 && len(busy) > 0, "busy queue IRQs with under %.0f%% of their interrupts on their planned CPU: %v", 100*onPlanShare, off)

	// The plan held in every sample, while the traffic flowed.
	var moved []string
	for _, s := range samples {
		for _, q := range s.IRQs {
			k, ok := queueOf(q.Actions[0])
			if ok && k < len(want.Queues) && q.Affinity != strconv.Itoa(want.Queues[k]) {
				moved = append(moved, fmt.Sprintf("uptime %.1f: irq %d %s on %s want %d", s.UptimeS, q.Number, q.Actions[0], q.Affinity, want.Queues[k]))
			}
		}
	}
	r.Check("t-plan-held", len(moved) == 0, "queue IRQs off their plan during the window: %v", moved)
	verifyEffective(r, busy)
}

// queueOf is the queue index of a virtio-net queue IRQ's name.
func queueOf(name string) (int, bool) {
	m := queueIndex.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	k, err := strconv.Atoi(m[1])
	return k, err == nil
}

// verifyLabNet checks where the generated frames went: the boot's
// namespace holds only lo and the taps, and the taps carried the frames
// the generator sent (to QEMU, or dropped at a full queue), but for
// what its qdisc still held when QEMU exited and the tap lost its
// carrier: at most txqlen frames for each of the tap's queues.
func verifyLabNet(r *Result, g Guest) {
	var names []string
	var tapTX, queued uint64
	taps := 0
	for _, l := range r.Links {
		names = append(names, l.Name)
		if i, err := strconv.Atoi(strings.TrimPrefix(l.Name, "tap")); err == nil && i < len(g.Net) {
			taps++
			tapTX += l.Stats.TX.Packets + l.Stats.TX.Dropped
			queued += l.TxQLen * uint64(g.Net[i].Queues)
		}
	}
	var sent float64
	for _, tr := range r.Traffic {
		sent += tr.FramesSent()
	}
	onlyLab := taps == len(g.Net) && len(names) == 1+taps && slices.Contains(names, "lo")
	r.Check("t-netns", onlyLab && len(r.Traffic) == 1 && sent > 0 && float64(tapTX) <= sent && sent <= float64(tapTX+queued),
		"namespace links %v; %d generator runs sent %.0f frames; taps transmitted or dropped %d (queue %d)", names, len(r.Traffic), sent, tapTX, queued)
}
