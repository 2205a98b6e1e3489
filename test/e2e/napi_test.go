//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/napi"
)

// The NAPI scenario checks pkg/napi's discovery against what the
// kernel does: with threaded NAPI on, it enables the queue pairs of
// MANAGuest's virtio-net one at a time (ethtool -L combined k) with
// traffic each time, so that the one thread that starts waking up is
// queue k-1's; then it sends from each CPU, so that one TX queue's
// output IRQ fires and one TX NAPI thread wakes. napi.Find, run on a
// copy of the guest's /proc and /sys/class/net, must name the same
// thread for every RX and TX queue. It also records, for people,
// whether the threads survive threaded off/on, ethtool -L and CPU
// hotplug, and what becomes of a pinned thread's affinity when its CPU
// goes offline.
const napiScript = `
ip link set lo up
IF=$(ls /sys/bus/pci/devices/$ADDR/virtio*/net/ | head -n 1)
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
echo 1 >"/proc/sys/net/ipv6/conf/$IF/disable_ipv6"
ip link set "$IF" up
# snap: "T pid comm voluntary_ctxt_switches Cpus_allowed_list" per NAPI
# kthread, "I irq name count" per virtio queue IRQ.
snap() {
	for d in /proc/[0-9]*; do
		_comm=$(cat $d/comm 2>/dev/null)
		case "$_comm" in napi/*)
			echo "T ${d#/proc/} $_comm $(awk '/^voluntary_ctxt_switches/{v=$2} /^Cpus_allowed_list/{a=$2} END{print v, a}' $d/status)";;
		esac
	done
	awk '/virtio[0-9]+-(input|output)\./{s=0; for(i=2;i<=NF;i++){if($i !~ /^[0-9]+$/) break; s+=$i}; sub(":","",$1); print "I", $1, $NF, s}' /proc/interrupts
}
step() { cat /tmp/a; echo "--"; snap; }
echo 1 >/sys/class/net/$IF/threaded
data n-on snap
rm -rf /tmp/fx
mkdir -p /tmp/fx/proc
for d in /proc/[0-9]*; do
	s=$(cat $d/stat 2>/dev/null) && mkdir /tmp/fx/proc/${d#/proc/} && echo "$s" >/tmp/fx/proc/${d#/proc/}/stat
done
for n in /sys/class/net/*; do
	mkdir -p /tmp/fx$n/device
	cat $n/ifindex >/tmp/fx$n/ifindex
	[ -e $n/device/driver ] && ln -s "$(readlink $n/device/driver)" /tmp/fx$n/device/driver
done
data n-fixture tar -C /tmp/fx -c .
for k in 1 2 3 4 5 6 7 8; do
	ethtool -L $IF combined $k
	snap >/tmp/a
	traffic 0 64 2000 2
	wait_for 10 rx_flowing $IF || fail n-traffic "no packet with $k queue pairs"
	sleep 3
	data n-rx$k step
done
ip addr add 198.18.0.2/24 dev $IF
arp -s 198.18.0.1 02:00:00:00:00:01
# TX: ping from each CPU, whose XPS queue's output IRQ fires; with 8
# pairs and with 4, so that every TX queue is used once. With 8 pairs
# on 4 CPUs the driver maps CPU c to queues c and c+4, and which one a
# flow takes depends on its hash: so CPU c is given queue c+4 alone.
for pairs in 8 4; do
	ethtool -L $IF combined $pairs
	if [ "$pairs" = 8 ]; then
		for q in 0 1 2 3; do
			echo 0 >/sys/class/net/$IF/queues/tx-$q/xps_cpus
			echo $((1 << q)) >/sys/class/net/$IF/queues/tx-$((q + 4))/xps_cpus
		done
	fi
	for cpu in 0 1 2 3; do
		snap >/tmp/a
		taskset -c $cpu ping -q -c 100 -i 0.01 -W 1 198.18.0.1 >/dev/null 2>&1
		sleep 1
		data n-tx$pairs-$cpu step
	done
done
ethtool -L $IF combined 8
echo 0 >/sys/class/net/$IF/threaded
data n-off snap
echo 1 >/sys/class/net/$IF/threaded
data n-on2 snap
ethtool -L $IF combined 4
data n-ch4 snap
ethtool -L $IF combined 8
RX0=$(for d in /proc/[0-9]*; do [ "$(cat $d/comm 2>/dev/null)" = napi/eth0-8193 ] && echo ${d#/proc/}; done)
taskset -p -c 3 $RX0
data n-pinned snap
echo 0 >/sys/devices/system/cpu/cpu3/online
data n-cpu3off snap
# Wake the pinned thread while its only CPU is offline.
snap >/tmp/a
traffic 0 64 2000 2
wait_for 10 rx_flowing $IF || fail n-traffic "no packet with CPU 3 offline"
sleep 3
data n-cpu3off-woken step
echo 1 >/sys/devices/system/cpu/cpu3/online
data n-cpu3on snap
pass n-done "probe finished"
`

// napiDaemonScript runs numairqd with threaded NAPI on since before it
// starts (the probe above turned it on), then cycles CPU 3 offline and
// online; after each step, once the queue IRQs are where they must be
// and the threads' CPUs and the IRQs' affinities have held for 3 s, it
// records both (tsnap). The host checks each thread against the IRQ
// the probe showed it serves.
const napiDaemonScript = `
# tsnap: "T pid comm Cpus_allowed_list" per NAPI kthread, "A name
# smp_affinity_list" per virtio queue IRQ.
tsnap() {
	for d in /proc/[0-9]*; do
		_comm=$(cat $d/comm 2>/dev/null)
		case "$_comm" in napi/*)
			echo "T ${d#/proc/} $_comm $(awk '/^Cpus_allowed_list/{print $2}' $d/status)";;
		esac
	done
	awk '/virtio[0-9]+-(input|output)\./{sub(":","",$1); print $1, $NF}' /proc/interrupts | while read n name; do
		echo "A $name $(cat /proc/irq/$n/smp_affinity_list)"
	done
}
# settle CHECK SECONDS: until tsnap holds for 3 s, at most SECONDS.
settle() {
	_prev= _same=0 _n=$2
	while [ "$_n" -gt 0 ]; do
		_cur=$(tsnap | md5sum)
		if [ "$_cur" = "$_prev" ]; then
			_same=$((_same + 1))
			[ "$_same" -ge 3 ] && { pass "$1" "threads and IRQs held 3 s"; return 0; }
		else
			_same=0
		fi
		_prev=$_cur
		sleep 1
		_n=$((_n - 1))
	done
	fail "$1" "threads or IRQs still changing after $2 s"
}
ethtool -L $IF combined 8
start_daemon
wp p-placed p_startup_to_placed_ms -since "$T0" -queues "@ALL_Q@" -control "@ALL_C@" -hold 500ms
settle p-settled-start 30
data p-start tsnap
wp p-offline p_offline_cpu3_ms -write /sys/devices/system/cpu/cpu3/online=0 -queues "@OFF_Q@" -control "@OFF_C@" -hold 300ms
settle p-settled-offline 30
data p-offline tsnap
wp p-online p_online_cpu3_ms -write /sys/devices/system/cpu/cpu3/online=1 -queues "@ALL_Q@" -control "@ALL_C@" -hold 300ms
settle p-settled-online 30
data p-online tsnap
alive p-alive
data p-plan numairqd plan --format json
data p-log cat "$LOG"
pass p-done "daemon part finished"
`

func TestNAPI(t *testing.T) {
	g := MANAGuest()
	all := allCPUs(g.NumCPUs())
	pAll, pOff := g.NetPlacement(0, all), g.NetPlacement(0, without(all, 3))
	daemon := strings.NewReplacer("@ALL_Q@", pAll.QueueArg(), "@ALL_C@", pAll.ControlList(),
		"@OFF_Q@", pOff.QueueArg(), "@OFF_C@", pOff.ControlList()).Replace(napiDaemonScript)
	Run(t, Scenario{
		Name:    "napi",
		Guest:   g,
		Script:  daemonScript(g.NetAddress(0), napiScript+daemon),
		Timeout: 420 * time.Second,
		Expect: []string{"n-done", "p-placed", "p-settled-start", "p-offline", "p-settled-offline",
			"p-online", "p-settled-online", "p-alive", "p-done"},
		Verify: func(t *testing.T, r *Result) {
			rx, tx := verifyNAPI(t, r, g.Net[0].Queues)
			verifyNAPIFollow(t, r, g.Net[0].Queues, rx, tx)
		},
	})
}

// napiSnap is one `snap` of the guest: NAPI threads and queue IRQs.
type napiSnap struct {
	threads map[int]napiThread // by pid
	irqs    map[string]uint64  // count by name, "virtio0-input.3"
}

type napiThread struct {
	comm     string
	wakeups  uint64 // voluntary_ctxt_switches
	affinity string
}

func parseNAPISnap(s string) (napiSnap, error) {
	n := napiSnap{threads: map[int]napiThread{}, irqs: map[string]uint64{}}
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 5 && f[0] == "T":
			pid, err1 := strconv.Atoi(f[1])
			w, err2 := strconv.ParseUint(f[3], 10, 64)
			if err1 != nil || err2 != nil {
				return n, fmt.Errorf("bad thread line %q", l)
			}
			n.threads[pid] = napiThread{comm: f[2], wakeups: w, affinity: f[4]}
		case len(f) == 4 && f[0] == "I":
			c, err := strconv.ParseUint(f[3], 10, 64)
			if err != nil {
				return n, fmt.Errorf("bad IRQ line %q", l)
			}
			n.irqs[f[2]] = c
		default:
			return n, fmt.Errorf("bad snap line %q", l)
		}
	}
	return n, nil
}

// napiStep parses a `step` (before, "--", after) and returns the pids
// whose thread woke up and the IRQ names whose count grew.
func napiStep(r *Result, name string) (woke []int, fired []string, err error) {
	d, ok := r.Data(name)
	if !ok || d.RC != 0 {
		return nil, nil, fmt.Errorf("data %s missing or failed", name)
	}
	before, after, ok := strings.Cut(string(d.Output), "--\n")
	if !ok {
		return nil, nil, fmt.Errorf("data %s: no separator", name)
	}
	a, err := parseNAPISnap(before)
	if err != nil {
		return nil, nil, err
	}
	b, err := parseNAPISnap(after)
	if err != nil {
		return nil, nil, err
	}
	for pid, t := range b.threads {
		if t.wakeups > a.threads[pid].wakeups {
			woke = append(woke, pid)
		}
	}
	for irq, c := range b.irqs {
		if c > a.irqs[irq] {
			fired = append(fired, irq)
		}
	}
	slices.Sort(woke)
	slices.Sort(fired)
	return woke, fired, nil
}

// verifyNAPI checks napi.Find against the probe and returns what the
// probe alone showed: the pid of each RX and TX queue's thread, by
// queue (only queues whose thread was seen without doubt).
func verifyNAPI(t *testing.T, r *Result, queues int) (rx, tx map[int]int) {
	rx, tx = map[int]int{}, map[int]int{}
	res, err := findInFixture(t, r)
	r.Check("n-find", err == nil && len(res.Threads) > 0, "napi.Find on the guest's /proc: %d threads, err %v", len(res.Threads), err)
	found := map[napi.Kind]map[int]int{napi.KindRX: {}, napi.KindTX: {}} // queue -> pid, as napi.Find says
	for _, th := range res.Threads {
		t.Logf("napi.Find: %+v", th)
		if th.Kind != "" {
			found[th.Kind][th.Queue] = th.PID
		}
	}
	// Empirical: with k pairs, the thread that wakes for the first time
	// serves queue k-1, whose input IRQ must have fired too.
	seen := map[int]bool{}
	for k := 1; k <= queues; k++ {
		woke, fired, err := napiStep(r, fmt.Sprintf("n-rx%d", k))
		if !r.Check(fmt.Sprintf("n-rx%d-data", k), err == nil, "%v", err) {
			continue
		}
		var fresh []int
		for _, pid := range woke {
			if !seen[pid] {
				fresh = append(fresh, pid)
			}
			seen[pid] = true
		}
		q := k - 1
		input := fmt.Sprintf("-input.%d", q)
		irqFired := slices.ContainsFunc(fired, func(s string) bool { return strings.HasSuffix(s, input) })
		if len(fresh) == 1 && irqFired {
			rx[q] = fresh[0]
		}
		r.Check(fmt.Sprintf("n-rx-queue%d", q), len(fresh) == 1 && irqFired && found[napi.KindRX][q] == fresh[0],
			"combined %d: newly woken %v (all woken %v), IRQs fired %v; napi.Find says queue %d is pid %d",
			k, fresh, woke, fired, q, found[napi.KindRX][q])
	}
	// TX: the one output IRQ that fired names the queue; the one TX
	// NAPI thread (id 0) that woke must be Find's for that queue.
	txSeen := map[int]bool{}
	for _, pairs := range []int{8, 4} {
		for c := range 4 {
			name := fmt.Sprintf("n-tx%d-%d", pairs, c)
			woke, fired, err := napiStep(r, name)
			if !r.Check(name+"-data", err == nil, "%v", err) {
				continue
			}
			var outputs []int
			for _, f := range fired {
				if _, q, ok := strings.Cut(f, "-output."); ok {
					n, _ := strconv.Atoi(q)
					outputs = append(outputs, n)
				}
			}
			var txWoke []int
			for _, pid := range woke {
				if !slices.Contains(slices.Collect(maps.Values(rx)), pid) {
					txWoke = append(txWoke, pid)
				}
			}
			if len(outputs) == 1 && len(txWoke) == 1 {
				tx[outputs[0]] = txWoke[0]
			}
			ok := len(outputs) == 1 && len(txWoke) == 1 && found[napi.KindTX][outputs[0]] == txWoke[0]
			if ok {
				txSeen[outputs[0]] = true
			}
			r.Check(fmt.Sprintf("n-tx-%d-pairs-cpu%d", pairs, c), ok,
				"output IRQs of queues %v fired, TX threads %v woke (all %v); napi.Find's TX threads by queue %v",
				outputs, txWoke, woke, found[napi.KindTX])
		}
	}
	r.Check("n-tx-all-queues", len(txSeen) == queues, "TX queues checked: %d of %d", len(txSeen), queues)
	for _, name := range []string{"n-on", "n-off", "n-on2", "n-ch4", "n-pinned", "n-cpu3off", "n-cpu3off-woken", "n-cpu3on"} {
		d, _ := r.Data(name)
		t.Logf("%s:\n%s", name, d.Output)
	}
	return rx, tx
}

// verifyNAPIFollow checks, at each step of the daemon part, that every
// NAPI kthread's CPUs are its IRQ's smp_affinity_list, by the probe's
// own answer of which thread serves which queue (rx, tx), not
// napi.Find's.
func verifyNAPIFollow(t *testing.T, r *Result, queues int, rx, tx map[int]int) {
	r.Check("p-truth", len(rx) == queues && len(tx) == queues,
		"the probe tied %d RX and %d TX threads to their queues, want %d each: RX %v TX %v", len(rx), len(tx), queues, rx, tx)
	for _, step := range []string{"p-start", "p-offline", "p-online"} {
		d, ok := r.Data(step)
		if !r.Check(step+"-data", ok && d.RC == 0, "data %s sent %t, exit status %d", step, ok, d.RC) {
			continue
		}
		t.Logf("%s:\n%s", step, d.Output)
		threads, irqs, err := parseTSnap(string(d.Output))
		if !r.Check(step+"-parse", err == nil, "%v", err) {
			continue
		}
		var good, bad []string
		for _, side := range []struct {
			name string
			pids map[int]int
		}{{"input", rx}, {"output", tx}} {
			for q := range queues {
				pid, known := side.pids[q]
				irq := irqBySuffix(irqs, fmt.Sprintf("-%s.%d", side.name, q))
				got, alive := threads[pid]
				line := fmt.Sprintf("%s.%d: pid %d on %q, IRQ on %q", side.name, q, pid, got, irq)
				if known && alive && irq != "" && got == irq {
					good = append(good, line)
				} else {
					bad = append(bad, line)
				}
			}
		}
		r.Check(step+"-follow", len(bad) == 0 && len(good) == 2*queues,
			"%d of %d threads on their IRQ's CPUs; wrong: %v", len(good), 2*queues, bad)
	}
	if d, ok := r.Data("p-log"); ok {
		n := strings.Count(string(d.Output), `"msg":"round done"`)
		t.Logf("numairqd logged %d rounds; its last lines:\n%s", n, tail(string(d.Output), 5))
	}
}

// parseTSnap parses tsnap: NAPI kthreads' Cpus_allowed_list by pid and
// queue IRQs' smp_affinity_list by name.
func parseTSnap(s string) (threads map[int]string, irqs map[string]string, err error) {
	threads, irqs = map[int]string{}, map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 4 && f[0] == "T":
			pid, err := strconv.Atoi(f[1])
			if err != nil {
				return nil, nil, fmt.Errorf("bad thread line %q", l)
			}
			threads[pid] = f[3]
		case len(f) == 3 && f[0] == "A":
			irqs[f[1]] = f[2]
		default:
			return nil, nil, fmt.Errorf("bad tsnap line %q", l)
		}
	}
	return threads, irqs, nil
}

// irqBySuffix is the list of the one IRQ whose name ends in suffix.
func irqBySuffix(irqs map[string]string, suffix string) string {
	for name, list := range irqs {
		if strings.HasSuffix(name, suffix) {
			return list
		}
	}
	return ""
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// findInFixture unpacks the guest's copy of /proc/*/stat and
// /sys/class/net and runs napi.Find on it, for eth0.
func findInFixture(t *testing.T, r *Result) (napi.Result, error) {
	d, ok := r.Data("n-fixture")
	if !ok || d.RC != 0 {
		return napi.Result{}, errors.New("no fixture from the guest")
	}
	root := t.TempDir()
	if err := untar(d.Output, root); err != nil {
		return napi.Result{}, err
	}
	return napi.Find([]string{"eth0"}, napi.Options{FS: napi.FS{Proc: filepath.Join(root, "proc"), Sys: filepath.Join(root, "sys")}})
}

// untar writes the directories, files and symbolic links of a tar
// archive under root.
func untar(b []byte, root string) error {
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(root, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			var f []byte
			if f, err = io.ReadAll(io.LimitReader(tr, 1<<20)); err == nil {
				err = os.WriteFile(p, f, 0o644)
			}
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, p)
		}
		if err != nil {
			return err
		}
	}
}
