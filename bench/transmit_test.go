//go:build e2e

package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/bench/measure"
	"github.com/numairqd/numairqd/test/e2e"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// The transmit case (issue 27): where a CPU's transmit completions
// fire, in one boot of the 4-node guest, in four states each from the
// driver's placement and XPS: the driver's own (no daemon), irqbalance
// running, and numairqd running with `xps: follow` and with `xps:
// leave`. In each, once the daemon settled, `guestcheck send` sends UDP
// from one online CPU at a time (pinned, unconnected sendto, so XPS
// picks the queue per datagram), then from all of them at once for the
// %soft figures. The frames go to an address in 198.18.0.0/15 on the
// tap side, which has no address: they end there.
const (
	txRate       = 2000  // datagrams/s of a one-CPU run
	txSeconds    = 2     // of a one-CPU run
	txAllRate    = 16000 // datagrams/s of the all-CPU run, split evenly
	txAllSeconds = 10
	txSrc        = "198.18.0.1"
	txDst        = "198.18.0.2"
	txLLAddr     = "02:00:00:00:00:02" // no interface has it
)

// txStates are the transmit case's states, in the order they run.
var txStates = []string{"driver", "irqbalance", "follow", "leave"}

// txSettleQuiet is how long each daemon's queue IRQ map must stay
// unchanged before the senders start (irqbalance acts on a 10 s tick).
var txSettleQuiet = map[string]string{"irqbalance": "11s", "follow": "3s", "leave": "3s"}

func transmitCase(t *testing.T, files map[string][]byte, hostBins []string) *measure.TransmitRun {
	g := e2e.FourNodeGuest()
	tr := &measure.TransmitRun{
		Title: "4 nodes x 2 vCPUs, distances 10/12/20/22, virtio-net 6 pairs on node 2",
		PCI:   g.NetAddress(0), Rate: txRate, SecondsPerCPU: txSeconds, AllRate: txAllRate, AllSeconds: txAllSeconds,
	}
	files = withConfig(files, "", metricsAddr)
	for _, x := range []string{"follow", "leave"} {
		files["/etc/numairqd-xps-"+x+".yaml"] = fmt.Appendf(nil, "listen: %q\nxps: %s\n", metricsAddr, x)
	}
	perState := 2*time.Minute + time.Duration(g.NumCPUs())*(txSeconds+3)*time.Second + txAllSeconds*time.Second
	r := e2e.Run(t, e2e.Scenario{
		Name:     "bench-transmit",
		Guest:    g,
		Script:   transmitScript(g),
		Files:    files,
		HostBins: hostBins,
		Timeout:  2*time.Minute + time.Duration(len(txStates))*perState,
		Expect:   []string{"transmit-done"},
	})
	for _, name := range txStates {
		st := measure.TransmitState{Name: name}
		var err error
		if st.State, err = r.GuestState(name + "-state"); err != nil {
			t.Error(err)
			continue
		}
		for _, c := range st.State.Online {
			run, err := txData(r, fmt.Sprintf("%s-tx-%d", name, c))
			if err != nil {
				t.Error(err)
				continue
			}
			st.PerCPU = append(st.PerCPU, run)
		}
		if st.All, err = txData(r, name+"-all"); err != nil {
			t.Error(err)
		}
		f, err := st.Figures(tr.PCI)
		if err != nil {
			t.Error(err)
		}
		t.Logf("transmit %s: tx queues aligned %d/%d, uncovered %d, mean distance %.2f over %d completions (%.0f%% local), %%soft max %.1f mean %.1f, all-CPU %.0f sent/s (%d errors)",
			name, f.Aligned, f.Queues, f.Uncovered, f.MeanDistance, f.Completions, 100*f.Local, f.SoftMax, f.SoftMean, f.SentPS, f.Errors)
		tr.States = append(tr.States, st)
	}
	return tr
}

// txData decodes the `guestcheck send` run the guest sent as data name.
func txData(r *e2e.Result, name string) (guestinfo.TxRun, error) {
	d, ok := r.Data(name)
	if !ok || d.RC != 0 {
		return guestinfo.TxRun{}, fmt.Errorf("%s: present %v, exit %d: %.300s", name, ok, d.RC, d.Output)
	}
	run, err := guestinfo.ParseTxRun(d.Output)
	if err != nil {
		return run, fmt.Errorf("%s: %w", name, err)
	}
	return run, nil
}

// transmitScript runs the states in one boot of g. Before each, every
// IRQ's affinity and every tx queue's xps_cpus go back to what the
// driver set at probe.
func transmitScript(g e2e.Guest) string {
	var cpus []string
	for c := range g.NumCPUs() {
		cpus = append(cpus, fmt.Sprint(c))
	}
	q := func(m map[string]string) string {
		var b strings.Builder
		for _, st := range txStates {
			if v, ok := m[st]; ok {
				fmt.Fprintf(&b, "\t%s) echo %s ;;\n", st, v)
			}
		}
		return b.String()
	}
	return fmt.Sprintf(`ADDR=%s STATES='%s' CPUS='%s'
RATE=%d SECS=%d ALLRATE=%d ALLSECS=%d SRC=%s DST=%s LLADDR=%s
quiet() {
	case $1 in
%s	esac
}
ip link set lo up
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
IF=$(ls /sys/bus/pci/devices/$ADDR/virtio*/net/ | head -n 1)
echo 1 >"/proc/sys/net/ipv6/conf/$IF/disable_ipv6"
ip addr add $SRC/15 dev "$IF"
ip link set "$IF" up
save_affinities /tmp/start.aff
for d in /sys/class/net/$IF/queues/tx-*; do echo "$d $(cat $d/xps_cpus)"; done >/tmp/start.xps
data start guestcheck state
send() { guestcheck send -dst $DST -iface "$IF" -lladdr $LLADDR "$@"; }
for state in $STATES; do
	restore_affinities /tmp/start.aff
	while read -r d m; do echo "$m" >"$d/xps_cpus"; done </tmp/start.xps
	pid=
	case $state in
	irqbalance) irqbalance --foreground >/tmp/$state.log 2>&1 & pid=$! ;;
	follow | leave) numairqd run --config /etc/numairqd-xps-$state.yaml >/tmp/$state.log 2>&1 & pid=$! ;;
	esac
	if [ -n "$pid" ]; then
		data "$state-settled" benchagent settle --changed --quiet "$(quiet $state)" --max 60s
	fi
	for c in $CPUS; do
		data "$state-tx-$c" send -cpus $c -rate $RATE -duration ${SECS}s
	done
	data "$state-all" send -cpus "$(cat /sys/devices/system/cpu/online)" -rate $ALLRATE -duration ${ALLSECS}s
	# After the senders: x86 moves an MSI IRQ at its next interrupt, so
	# only now is effective_affinity_list where completions fire.
	data "$state-state" guestcheck state
	if [ -n "$pid" ]; then
		kill $pid
		wait $pid
		data "$state-log" tail -c 6000 /tmp/$state.log
	fi
done
pass transmit-done "$STATES"
`, g.NetAddress(0), strings.Join(txStates, " "), strings.Join(cpus, " "),
		txRate, txSeconds, txAllRate, txAllSeconds, txSrc, txDst, txLLAddr, q(txSettleQuiet))
}
