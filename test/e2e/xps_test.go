//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// The XPS scenario checks issue 27, "the data path follows the plan":
// numairqd moves a NIC's queue IRQs, and the transmit steering
// (queues/tx-K/xps_cpus) must follow, or a CPU's transmit completions
// fire on a CPU of another node. In one boot of FourNodeGuest it takes
// five states: the driver's own (before numairqd starts: virtio-net
// sets XPS and the IRQs together, so aligned), numairqd's first round,
// CPU 5 offline, CPU 5 back online, and a re-bind of virtio-net. In
// each, the host checks that every tx queue's completion IRQ
// (virtioN-output.K) fires on a CPU of its xps_cpus and that every
// online CPU is in some queue's xps_cpus; then `guestcheck send` sends
// UDP from one online CPU at a time, pinned, with unconnected sendto
// (XPS picks the queue per datagram), and at least txShare of the
// completions in that window must fire on the sending CPU when a tx
// queue's IRQ is there, else on the CPUs of the nearest such IRQs
// (guestinfo.CompletionTargets). x86 moves an MSI IRQ only at its next
// interrupt, so effective_affinity_list is read after the senders: it
// is where their completions fired.

const xpsScript = `
ip link set lo up
# No IPv6 anywhere, also on the re-bound device: the only frames the
# guest sends are the senders'.
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
# tx_up: the NIC up with an address in the lab's range; the senders
# install a permanent neighbour entry for @DST@ (no ARP).
tx_up() {
	IF=$(ls /sys/bus/pci/devices/$ADDR/virtio*/net/ | head -n 1)
	ip addr add @SRC@/15 dev "$IF"
	ip link set "$IF" up
}
online_cpus() {
	for c in @CPUS@; do
		if [ "$c" = 0 ] || [ "$(cat /sys/devices/system/cpu/cpu$c/online)" = 1 ]; then echo $c; fi
	done
}
# send ARGS...: guestcheck send to @DST@ on $IF, bounded.
send() { guestcheck send -dst @DST@ -iface "$IF" -lladdr @LLADDR@ "$@"; }
# xps_fired: a short send from every online CPU, so that every tx queue
# XPS uses fires (x86 moves an MSI IRQ at its next interrupt: until
# then effective_affinity_list shows the old CPU), then XPS against
# the completion IRQs.
xps_fired() {
	send -cpus "$(cat /sys/devices/system/cpu/online)" -rate 1000 -duration 300ms >/dev/null &&
		guestcheck xps -pci "$ADDR"
}
# stage NAME: wait (at most the deadline, by uptime; the host judges)
# until XPS and the completion IRQs agree, send from each online CPU in
# turn, then take XPS and the state, whose effective affinities are
# those the senders' completions saw.
stage() {
	_end=$(($(cut -d. -f1 /proc/uptime) + DEADLINE_S))
	while ! xps_fired >/dev/null 2>&1 && [ "$(cut -d. -f1 /proc/uptime)" -lt "$_end" ]; do :; done
	for c in $(online_cpus); do
		data "$1-tx-$c" send -cpus "$c" -rate @RATE@ -duration @SECONDS@s
	done
	data "$1-xps" guestcheck xps -pci "$ADDR"
	data "$1-state" guestcheck state
}
tx_up
stage driver

start_daemon --config "$CFG"
wp x-placed x_startup_to_placed_ms -since "$T0" -queues "@ALL_Q@" -control "@ALL_C@" -hold 500ms
stage daemon

wp x-offline x_offline_ms -write /sys/devices/system/cpu/cpu@CPU@/online=0 -queues "@OFF_Q@" -control "@OFF_C@" -hold 300ms
stage offline
wp x-online x_online_ms -write /sys/devices/system/cpu/cpu@CPU@/online=1 -queues "@ALL_Q@" -control "@ALL_C@" -hold 300ms
stage online

echo "$ADDR" >/sys/bus/pci/drivers/virtio-pci/unbind
wait_for "$DEADLINE_S" sh -c "! grep -q -- '-$ADDR ' /proc/interrupts" || fail x-unbound "IRQs of $ADDR still in /proc/interrupts"
wp x-rebind x_rebind_ms -write /sys/bus/pci/drivers/virtio-pci/bind="$ADDR" -queues "@ALL_Q@" -control "@ALL_C@" -hold 300ms
tx_up
stage rebind
alive x-alive
stop_daemon x-stop
data daemon-log cat "$LOG"
`

// The senders: one CPU at a time, bounded; the tap side has no address,
// so the frames end there. txLLAddr is a locally administered MAC that
// no interface has.
const (
	txSrc     = "198.18.0.1"
	txDst     = "198.18.0.2"
	txLLAddr  = "02:00:00:00:00:02"
	txRate    = 2000
	txSeconds = 2
	// txShare is the least share of a sender's completions that must
	// fire on its target CPUs.
	txShare = 0.9
)

// xpsStages are the scenario's states, in order: each is a subtest and
// the prefix of its data.
var xpsStages = []string{"driver", "daemon", "offline", "online", "rebind"}

func TestXPS(t *testing.T) {
	g := FourNodeGuest()
	addr := g.NetAddress(0)
	all := allCPUs(g.NumCPUs())
	pAll := g.NetPlacement(0, all)
	pOff := g.NetPlacement(0, without(all, hotplugCPU))
	cpus := make([]string, len(all))
	for i, c := range all {
		cpus[i] = strconv.Itoa(c)
	}
	script := strings.NewReplacer(
		"@ALL_Q@", pAll.QueueArg(), "@ALL_C@", pAll.ControlList(),
		"@OFF_Q@", pOff.QueueArg(), "@OFF_C@", pOff.ControlList(),
		"@CPU@", strconv.Itoa(hotplugCPU), "@CPUS@", strings.Join(cpus, " "),
		"@SRC@", txSrc, "@DST@", txDst, "@LLADDR@", txLLAddr,
		"@RATE@", strconv.Itoa(txRate), "@SECONDS@", strconv.Itoa(txSeconds),
	).Replace(xpsScript)
	Run(t, Scenario{
		Name:    "xps",
		Guest:   g,
		Script:  daemonScript(addr, script),
		Files:   map[string][]byte{"/etc/numairqd/numairqd.yaml": []byte("listen: \"127.0.0.1:9768\"\n")},
		Timeout: 10 * time.Minute,
		Expect:  []string{"x-placed", "x-offline", "x-online", "x-rebind", "x-alive", "x-stop"},
		Verify: func(t *testing.T, r *Result) {
			for _, st := range xpsStages {
				t.Run(st, func(t *testing.T) { verifyXPSStage(r.forSubtest(t), st, addr) })
			}
			if t.Failed() {
				dumpDaemonLog(t, r)
			}
		},
	})
}

// verifyXPSStage checks one state: XPS against the completion IRQs,
// then where each sender's completions fired.
func verifyXPSStage(r *Result, stage, addr string) {
	s, err := r.GuestState(stage + "-state")
	if !r.Check(stage+"-state", err == nil, "%v", err) {
		return
	}
	rep := s.XPS(addr)
	r.Check(stage+"-xps-aligned", rep.Aligned() == len(rep.Queues) && len(rep.Queues) > 0 && len(rep.Errors) == 0,
		"every tx queue's completion IRQ on a CPU of its xps_cpus: %s", rep)
	r.Check(stage+"-xps-covers", len(rep.Uncovered) == 0 && len(rep.Queues) > 0,
		"online CPUs %v in no tx queue's xps_cpus: %v", s.Online, rep.Uncovered)
	r.Metric(stage+"_tx_queues_aligned", rep.Aligned())

	var shares []float64
	var completions, weighted float64 // for the mean distance sender -> completion
	for _, c := range s.Online {
		name := fmt.Sprintf("%s-tx-%d", stage, c)
		d, ok := r.Data(name)
		if !ok || d.RC != 0 {
			r.Check(name, false, "guestcheck send on cpu %d: present %v, exit %d: %.300s", c, ok, d.RC, d.Output)
			continue
		}
		run, err := guestinfo.ParseTxRun(d.Output)
		if err != nil || run.TotalSent() == 0 {
			r.Check(name, false, "guestcheck send on cpu %d: %v; sent %d", c, err, run.TotalSent())
			continue
		}
		perCPU, perQueue, err := run.Completions()
		if err != nil {
			r.Check(name, false, "%v", err)
			continue
		}
		for to, n := range perCPU {
			completions += float64(n)
			weighted += float64(n) * float64(s.Distance(c, to))
		}
		want := s.CompletionTargets(rep, c)
		share, total := shareOn(perCPU, want)
		queue, _ := guestinfo.Busiest(perQueue)
		shares = append(shares, share)
		r.Check(name, total > 0 && share >= txShare,
			"sender on cpu %d (node %d) sent %d (%d errors%s): %d completions, %.0f%% on cpus %v (want >= %.0f%%); by CPU %v, by tx queue %v (mostly tx-%d)",
			c, s.NodeOf(c), run.TotalSent(), sum(run.Errors), firstErr(run), total, 100*share, want, 100*txShare, perCPU, perQueue, queue)
	}
	if completions > 0 {
		r.Metric(stage+"_tx_mean_distance", weighted/completions)
	}
	med, lo, hi := medianMinMax(shares)
	r.Metric(stage+"_tx_share_on_target_median", med)
	r.Metric(stage+"_tx_share_on_target_min", lo)
	r.Metric(stage+"_tx_share_on_target_max", hi)
}

// shareOn is the share of counts on cpus, and the total.
func shareOn(counts map[int]uint64, cpus []int) (float64, uint64) {
	var on, total uint64
	for c, n := range counts {
		total += n
		if slices.Contains(cpus, c) {
			on += n
		}
	}
	if total == 0 {
		return 0, 0
	}
	return float64(on) / float64(total), total
}

func sum(v []uint64) uint64 {
	var n uint64
	for _, x := range v {
		n += x
	}
	return n
}

func firstErr(run guestinfo.TxRun) string {
	if run.FirstError == "" {
		return ""
	}
	return ", first " + run.FirstError
}
