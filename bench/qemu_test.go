//go:build e2e

// Package bench compares numairqd with irqbalance inside QEMU guests of
// the e2e harness (test/e2e): placement quality after one run of each,
// reaction to CPU hotplug and driver re-binds, and each daemon's cost
// (CPU time, syscalls and rounds per event, peak RSS), with the floor
// (benchagent floor) as the yardstick for the cost of hotplug churn, and
// where transmit completions fire with and without XPS following the
// placement (transmit_test.go).
// It writes raw.json to $BENCH_OUT; bench/report turns that into
// RESULTS.md. Run it through bench/run.sh.
package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/bench/measure"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/test/e2e"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

func TestMain(m *testing.M) {
	e2e.RemoveStaleNets()
	code := m.Run()
	e2e.CleanupBinaries()
	os.Exit(code)
}

// params are the knobs of one bench run, from the environment.
type params struct {
	out         string
	reps        int
	window      time.Duration
	idle        time.Duration
	churnCycles int
}

func loadParams(t *testing.T) params {
	p := params{out: os.Getenv("BENCH_OUT"), reps: 3, window: 30 * time.Second, idle: 10 * time.Second, churnCycles: 20}
	if p.out == "" {
		p.out = t.TempDir()
	}
	if v, err := strconv.Atoi(os.Getenv("BENCH_REPS")); err == nil && v > 0 {
		p.reps = v
	}
	if v, err := time.ParseDuration(os.Getenv("BENCH_WINDOW")); err == nil && v > 0 {
		p.window = v
	}
	if v, err := time.ParseDuration(os.Getenv("BENCH_IDLE")); err == nil && v > 0 {
		p.idle = v
	}
	if v, err := strconv.Atoi(os.Getenv("BENCH_CHURN")); err == nil && v > 0 {
		p.churnCycles = v
	}
	return p
}

func TestBench(t *testing.T) {
	start := time.Now()
	p := loadParams(t)
	irqb := irqbalanceBin(t)
	files := guestFiles(t, irqb)
	hostBins := []string{irqb}
	raw := measure.Raw{Meta: hostMeta(p, irqb)}
	stopLoad := sampleLoad(&raw.Meta)
	defer func() {
		stopLoad()
		raw.Meta.WallS = time.Since(start).Seconds()
		b, err := json.MarshalIndent(raw, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(p.out, "raw.json")
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes) after %v", dst, len(b), time.Since(start).Round(time.Second))
	}()

	// Placement: the same starting state for both daemons.
	for _, tc := range []struct {
		name, title, banned string
		guest               e2e.Guest
	}{
		{"numa4", "4 nodes x 2 CPUs, distances 10/12/20/22, virtio-net 6 pairs on node 2", "", e2e.FourNodeGuest()},
		{"mana", "MANA-like: 4 vCPUs on 2 nodes, virtio-net 8 pairs on node 1", "", e2e.MANAGuest()},
		{"banned", "4-node guest, virtio-net 4 pairs on node 2, whose CPUs 4-5 are banned for both daemons", "4-5", bannedGuest()},
	} {
		t.Run("placement/"+tc.name, func(t *testing.T) {
			r := e2e.Run(t, e2e.Scenario{
				Name:     "bench-placement-" + tc.name,
				Guest:    tc.guest,
				Script:   placementScript(tc.banned),
				Files:    withConfig(files, tc.banned, ""),
				HostBins: hostBins,
				Timeout:  4 * time.Minute,
				Expect:   []string{"placement-done"},
			})
			raw.Placement = append(raw.Placement, placementRun(t, r, tc.name, tc.title, tc.banned))
		})
	}

	// Traffic: the same load in each state of the placement; skewed
	// loads for load balancing, and its stability over 10 minutes
	// (traffic/steady, BENCH_STEADY=0 skips it).
	for _, tc := range trafficCases() {
		t.Run("traffic/"+tc.Name, func(t *testing.T) {
			r := e2e.Run(t, e2e.Scenario{
				Name:     "bench-traffic-" + tc.Name,
				Guest:    tc.guest,
				Script:   trafficScript(tc),
				Files:    trafficFiles(files),
				HostBins: hostBins,
				Timeout:  tc.timeout(),
				Expect:   []string{"traffic-done"},
			})
			raw.Traffic = append(raw.Traffic, trafficRun(t, r, tc))
		})
	}

	// Reaction and cost: one daemon per guest, numairqd built at
	// $BENCH_BASELINE (numairqd@REV) just before the working tree's so
	// that both see the same host load; then the floor, in a boot of
	// its own, under the same churn.
	daemons := []string{"irqbalance"}
	if raw.Meta.Baseline = baselineRev(t); raw.Meta.Baseline != "" {
		daemons = append(daemons, "numairqd@"+raw.Meta.Baseline)
	}
	for _, name := range append(daemons, "numairqd", "floor") {
		t.Run("daemon/"+name, func(t *testing.T) {
			daemon, build, _ := strings.Cut(name, "@")
			files := withConfig(files, "", metricsAddr)
			var sum string
			if build != "" {
				// Files are packed after the harness's binaries, and the
				// kernel's unpacker truncates a file named twice: this
				// replaces /bin/numairqd (checked with its checksum).
				bin := buildBaseline(t, build)
				files["/bin/numairqd"] = bin
				sum = fmt.Sprintf("%x", sha256.Sum256(bin))
			}
			g := e2e.FourNodeGuest()
			churn := time.Duration(p.reps) * (time.Duration(p.churnCycles)*2*time.Second + 10*time.Second)
			timeout := 3*time.Minute + churn
			script := floorScript(p, timeout)
			if daemon != "floor" {
				per := 15*time.Second + p.window + 25*time.Second
				timeout += time.Duration(p.reps)*(p.idle+5*time.Second) + time.Duration(3*p.reps)*per
				script = daemonScript(daemon, p, g.NetAddress(0))
			}
			r := e2e.Run(t, e2e.Scenario{
				Name:     "bench-daemon-" + daemon,
				Guest:    g,
				Script:   script,
				Files:    files,
				HostBins: hostBins,
				Timeout:  timeout,
				Expect:   []string{"daemon-done"},
			})
			dr := daemonRun(t, r, daemon, p)
			if build != "" {
				dr.Build = build
				if got, _, _ := strings.Cut(dataString(r, "numairqd-sha256"), " "); got != sum {
					t.Errorf("the guest ran /bin/numairqd with sha256 %q, not the build of %s (%s)", got, build, sum)
				}
			}
			raw.Daemons = append(raw.Daemons, dr)
		})
	}

	// Bans as cri-o writes them for a pod, then cleared: numairqd
	// running, irqbalance as cri-o's one-shot after each write.
	t.Run("bans", func(t *testing.T) {
		g := e2e.FourNodeGuest()
		r := e2e.Run(t, e2e.Scenario{
			Name:     "bench-bans",
			Guest:    g,
			Script:   bansScript(g, p),
			Files:    withConfig(files, "", metricsAddr),
			HostBins: hostBins,
			// irqbalance's one-shots wait 10 s each; a watch that never
			// settles lasts the window.
			Timeout: 3*time.Minute + time.Duration(4*p.reps)*(p.window+10*time.Second),
			Expect:  []string{"bans-done"},
		})
		raw.Bans = bansRuns(t, r, p)
		if raw.Meta.GuestKernel == "" {
			if st, err := r.GuestState("start"); err == nil {
				raw.Meta.GuestKernel = st.Kernel
			}
		}
	})
	// Transmit: where each CPU's transmit completions fire, with and
	// without XPS following the placement.
	t.Run("transmit", func(t *testing.T) { raw.Transmit = transmitCase(t, files, hostBins) })
	if len(raw.Placement) > 0 {
		raw.Meta.GuestKernel = raw.Placement[0].Start.Kernel
	} else if raw.Meta.GuestKernel == "" && raw.Transmit != nil && len(raw.Transmit.States) > 0 {
		raw.Meta.GuestKernel = raw.Transmit.States[0].State.Kernel
	} else if raw.Meta.GuestKernel == "" && len(raw.Traffic) > 0 && len(raw.Traffic[0].States) > 0 {
		raw.Meta.GuestKernel = raw.Traffic[0].States[0].Before.Kernel
	}
}

// bansCPU is the pod's CPU in the bans case: it holds queue IRQs under
// both daemons in FourNodeGuest (irqbalance stacks them on node 2's
// CPUs 4-5), so a ban has something to move.
const bansCPU = hotplugCPU

// bansScript measures both daemons in one boot of g, irqbalance first.
// Each ban writes /proc/irq/default_smp_affinity without bansCPU, then
// IRQBALANCE_BANNED_CPUS="<hex>" into /etc/default/irqbalance; each
// clear writes both back (the mask all zeros). For irqbalance, which
// cri-o does not find as a service, the shell then runs what cri-o
// runs: IRQBALANCE_BANNED_CPUS=<hex> irqbalance --oneshot (it forks
// and places after its 10 s interval). benchagent watch does the shell
// as its event and polls the queue IRQs until the map has been quiet
// for 3 s (irqbalance) or 2 s (numairqd), or the window ends. Then,
// where the kernel has cpuset.cpus.isolated, bansCPU is made an
// isolated cgroup partition and removed again, numairqd running: the
// same ban and clear, from the partition.
func bansScript(g e2e.Guest, p params) string {
	n := g.NumCPUs()
	var all []int
	for c := range n {
		all = append(all, c)
	}
	hex := cpumask.New(bansCPU).Hex(64)
	zero := cpumask.New().Hex(64)
	def := cpumask.New(all...).AndNot(cpumask.New(bansCPU)).Hex(n)
	allHex := cpumask.New(all...).Hex(n)
	return fmt.Sprintf(`REPS=%d WINDOW=%s HEX=%s ZERO=%s DEF=%s ALL=%s CPU=%d
ENVFILE=/etc/default/irqbalance CG=/sys/fs/cgroup
ip link set lo up
grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG
mkdir -p /etc/default
data start guestcheck state
save_affinities /tmp/start.aff
# The lines go to /tmp first: the write into the watched directory is
# then one redirect.
printf 'IRQBALANCE_BANNED_CPUS="%%s"\n' $HEX >/tmp/ban.env
printf 'IRQBALANCE_BANNED_CPUS="%%s"\n' $ZERO >/tmp/clear.env
no_irqbalance() { ! cat /proc/[0-9]*/comm 2>/dev/null | grep -qx irqbalance; }
# irqbalance's own placement first, without bans: what cri-o's first
# one-shot would have found.
irqbalance --oneshot --foreground >/tmp/irqbalance.log 2>&1
data irqbalance-start guestcheck state
for daemon in irqbalance numairqd; do
	if [ $daemon = numairqd ]; then
		restore_affinities /tmp/start.aff
		rm -f /tmp/benchagent.json $ENVFILE
		numairqd run --config /etc/numairqd.yaml >/tmp/numairqd.log 2>&1 &
		pid=$!
		data numairqd-settled benchagent settle --changed --quiet 3s --max 60s
	fi
	q=2s
	[ $daemon = irqbalance ] && q=3s
	rep=1
	while [ $rep -le $REPS ]; do
		for k in ban clear; do
			if [ $k = ban ]; then aff=$DEF m=$HEX; else aff=$ALL m=$ZERO; fi
			cmd="echo $aff >/proc/irq/default_smp_affinity; cat /tmp/$k.env >$ENVFILE"
			[ $daemon = irqbalance ] && cmd="$cmd; IRQBALANCE_BANNED_CPUS=$m irqbalance --oneshot >>/tmp/irqbalance.log 2>&1"
			data "$daemon-$k-$rep" benchagent watch --event "exec:$cmd" --until changed --quiet $q --window $WINDOW
			wait_for 60 no_irqbalance || fail "$daemon-$k-$rep-oneshot" "irqbalance --oneshot still running"
		done
		rep=$((rep + 1))
	done
done
# An isolated cgroup partition of the CPU, made then removed, with
# numairqd still running (6.8+: cpuset.cpus.isolated, mounted before it
# started); irqbalance reads no partitions.
if [ -e $CG/cpuset.cpus.isolated ] && echo +cpuset >$CG/cgroup.subtree_control; then
	rep=1
	while [ $rep -le $REPS ]; do
		for k in ban clear; do
			cmd="rmdir $CG/bench-p"
			[ $k = ban ] && cmd="mkdir $CG/bench-p && echo $CPU >$CG/bench-p/cpuset.cpus && echo isolated >$CG/bench-p/cpuset.cpus.partition"
			data "partition-$k-$rep" benchagent watch --event "exec:$cmd" --until changed --quiet 2s --window $WINDOW
		done
		rep=$((rep + 1))
	done
fi
kill $pid
wait $pid
data numairqd-log tail -c 6000 /tmp/numairqd.log
data irqbalance-log tail -c 6000 /tmp/irqbalance.log
pass bans-done "irqbalance then numairqd"
`, p.reps, p.window, hex, zero, def, allHex, bansCPU)
}

// bansRuns decodes the bans boot: one BansRun per daemon.
func bansRuns(t *testing.T, r *e2e.Result, p params) []measure.BansRun {
	var out []measure.BansRun
	for _, daemon := range []string{"irqbalance", "numairqd"} {
		br := measure.BansRun{Daemon: daemon, Banned: strconv.Itoa(bansCPU), Log: dataString(r, daemon+"-log")}
		for rep := 1; rep <= p.reps; rep++ {
			for _, k := range []string{"ban", "clear"} {
				ev := measure.BanEvent{Rep: rep, Kind: k}
				if err := watchData(r, fmt.Sprintf("%s-%s-%d", daemon, k, rep), &ev.Watch); err != nil {
					t.Error(err)
					continue
				}
				br.Events = append(br.Events, ev)
			}
		}
		ban, clear, _, _ := measure.BanTimes(br)
		t.Logf("bans %s: ban %v s, clear %v s (NaN: never within %v)", daemon, ban, clear, p.window)
		out = append(out, br)
	}
	if _, ok := r.Data("partition-ban-1"); !ok {
		t.Logf("no isolated partition events: the guest kernel has no cpuset.cpus.isolated (6.8+)")
		return out
	}
	br := measure.BansRun{Daemon: "numairqd", Banned: strconv.Itoa(bansCPU), Source: measure.SourcePartition}
	for rep := 1; rep <= p.reps; rep++ {
		for _, k := range []string{"ban", "clear"} {
			ev := measure.BanEvent{Rep: rep, Kind: k}
			if err := watchData(r, fmt.Sprintf("partition-%s-%d", k, rep), &ev.Watch); err != nil {
				t.Error(err)
				continue
			}
			br.Events = append(br.Events, ev)
		}
	}
	ban, clear, _, _ := measure.BanTimes(br)
	t.Logf("isolated partition, numairqd: made %v s, removed %v s (NaN: never within %v)", ban, clear, p.window)
	return append(out, br)
}

// bannedGuest is FourNodeGuest with 4 queue pairs: with node 2 banned
// six CPUs remain, so which node the queues go to (node 3 is nearest)
// shows in the mean distance, which it would not if every allowed CPU
// got a queue.
func bannedGuest() e2e.Guest {
	g := e2e.FourNodeGuest()
	g.Net = []e2e.NetDevice{{Node: 2, Queues: 4}}
	return g
}

// placementScript runs irqbalance --oneshot --foreground, writes every
// IRQ's starting smp_affinity_list back, then runs numairqd --oneshot,
// with a state snapshot after each step.
func placementScript(banned string) string {
	return `BANNED='` + banned + `'
data start guestcheck state
save_affinities /tmp/start.aff
t0=$(uptime_s)
if [ -n "$BANNED" ]; then
	IRQBALANCE_BANNED_CPULIST=$BANNED irqbalance --oneshot --foreground >/tmp/irqbalance.log 2>&1
else
	irqbalance --oneshot --foreground >/tmp/irqbalance.log 2>&1
fi
rc=$?
data irqbalance-run echo "$rc $t0 $(uptime_s)"
data irqbalance guestcheck state
data irqbalance-log tail -c 6000 /tmp/irqbalance.log
restore_affinities /tmp/start.aff
data reset guestcheck state
data plan numairqd plan --config /etc/numairqd.yaml --format json
t0=$(uptime_s)
numairqd run --oneshot --config /etc/numairqd.yaml >/tmp/numairqd.log 2>&1
rc=$?
data numairqd-run echo "$rc $t0 $(uptime_s)"
data numairqd guestcheck state
data numairqd-log tail -c 6000 /tmp/numairqd.log
pass placement-done "irqbalance then numairqd"
`
}

// The settle and watch thresholds per daemon: irqbalance acts on a
// 10 s tick, so its map must be quiet for longer than one tick before
// an event; numairqd coalesces events for at most 0.5 s.
var (
	settleQuiet = map[string]string{"irqbalance": "11s", "numairqd": "3s"}
	watchQuiet  = map[string]string{"irqbalance": "3s", "numairqd": "2s"}
	watchUntil  = map[string]string{"irqbalance": "irqbalance", "numairqd": "changed"}
	daemonCmd   = map[string]string{
		"irqbalance": "irqbalance --foreground",
		"numairqd":   "numairqd run --config /etc/numairqd.yaml",
	}
)

// hotplugCPU holds virtio-net queues under both daemons in FourNodeGuest
// (node 2 is CPUs 4-5).
const hotplugCPU = 5

// metricsAddr is numairqd's metrics endpoint in the daemon boots: the
// bench reads numairqd_rounds_total there (loopback is brought up for
// it).
const metricsAddr = "127.0.0.1:9768"

// costProbe defines the guest shell's `cost NAME EDGE`: one data call
// "cost-NAME-EDGE" with the daemon's (PID $pid) /proc/PID/stat, status,
// task/*/schedstat and io, each section headed "=== NAME" (measure.ParseCostSample),
// and, when $METRICS is set (numairqd), its round and write counters
// and its own event-to-applied latency from the metrics endpoint. EDGE 0 opens a period and 1 closes it: the
// scrape comes before the /proc files when opening and after them when
// closing, so the daemon's work serving it falls outside every period.
const costProbe = `procfiles() {
	echo "=== uptime"; cut -d' ' -f1 /proc/uptime
	echo "=== stat"; cat /proc/$pid/stat
	echo "=== status"; cat /proc/$pid/status
	echo "=== schedstat"; cat /proc/$pid/task/*/schedstat
	echo "=== io"; cat /proc/$pid/io
}
scrape() {
	[ -n "$METRICS" ] || return 0
	echo "=== metrics"
	wget -qO- "$METRICS" | grep -E '^numairqd_(rounds_total|affinity_writes_total)[{ ]|^numairqd_event_to_applied_seconds_(sum|count) '
}
probe() {
	if [ "$1" = 0 ]; then scrape; procfiles; else procfiles; scrape; fi
	return 0
}
cost() { data "cost-$1-$2" probe "$2"; }
`

// churnBlocks is the shell for $REPS blocks of $CYCLES offline/online
// cycles of CPU $CPU, each block between cost samples churn-R-0 and
// churn-R-1.
const churnBlocks = `rep=1
while [ $rep -le $REPS ]; do
	cost churn-$rep 0
	i=0
	while [ $i -lt $CYCLES ]; do
		echo 0 >/sys/devices/system/cpu/cpu$CPU/online
		usleep 250000
		echo 1 >/sys/devices/system/cpu/cpu$CPU/online
		usleep 250000
		i=$((i + 1))
	done
	sleep 2
	cost churn-$rep 1
	rep=$((rep + 1))
done
`

func daemonScript(daemon string, p params, pci string) string {
	metrics := ""
	if daemon == "numairqd" {
		metrics = "http://" + metricsAddr + "/metrics"
	}
	return fmt.Sprintf(`DAEMON=%s CPU=%d PCI=%s REPS=%d CYCLES=%d IDLE=%d WINDOW=%s
SETTLE_Q=%s WATCH_Q=%s UNTIL=%s METRICS=%s
ip link set lo up
data start guestcheck state
%s >/tmp/daemon.log 2>&1 &
pid=$!
`, daemon, hotplugCPU, pci, p.reps, p.churnCycles, int(p.idle.Seconds()), p.window,
		settleQuiet[daemon], watchQuiet[daemon], watchUntil[daemon], metrics, daemonCmd[daemon]) + costProbe + `data settled benchagent settle --changed --quiet $SETTLE_Q --max 60s
rep=1
while [ $rep -le $REPS ]; do
	cost idle-$rep 0
	sleep $IDLE
	cost idle-$rep 1
	rep=$((rep + 1))
done
` + churnBlocks + `rep=1
while [ $rep -le $REPS ]; do
	for ev in offline:$CPU online:$CPU rebind:$PCI; do
		k=${ev%%:*}
		data "settle-$rep-$k" benchagent settle --quiet $SETTLE_Q --max 60s
		cost $k-$rep 0
		data "watch-$rep-$k" benchagent watch --event $ev --until $UNTIL --quiet $WATCH_Q --window $WINDOW
		cost $k-$rep 1
		if [ $DAEMON = numairqd ]; then
			data "plan-$rep-$k" numairqd plan --config /etc/numairqd.yaml --format json
		fi
	done
	rep=$((rep + 1))
done
kill $pid
wait $pid
data daemon-log tail -c 12000 /tmp/daemon.log
[ $DAEMON = numairqd ] && data numairqd-sha256 sha256sum /bin/numairqd
pass daemon-done "$DAEMON"
`
}

// floorScript runs `benchagent floor` (the floor of a round after a
// CPU event) under the daemons' churn blocks, sampled the same way.
// It stops at the end, or by itself after max.
func floorScript(p params, max time.Duration) string {
	return fmt.Sprintf(`DAEMON=floor CPU=%d REPS=%d CYCLES=%d MAX=%ds METRICS=
ip link set lo up
data start guestcheck state
# numairqd's plans for both online sets of the churn: the floor writes
# what they say differs, as numairqd would, without planning.
numairqd plan --config /etc/numairqd.yaml --format json >/tmp/plan-all.json
echo 0 >/sys/devices/system/cpu/cpu$CPU/online
numairqd plan --config /etc/numairqd.yaml --format json >/tmp/plan-off.json
echo 1 >/sys/devices/system/cpu/cpu$CPU/online
benchagent floor --max $MAX --plan /tmp/plan-all.json --plan /tmp/plan-off.json >/tmp/daemon.log 2>&1 &
pid=$!
wait_for 30 grep -q '^ready' /tmp/daemon.log || fail floor-ready "$(cat /tmp/daemon.log)"
`, hotplugCPU, p.reps, p.churnCycles, int(max.Seconds())) + costProbe + churnBlocks + `kill $pid
wait $pid
data daemon-log cat /tmp/daemon.log
pass daemon-done "$DAEMON"
`
}

func placementRun(t *testing.T, r *e2e.Result, name, title, banned string) measure.PlacementRun {
	pr := measure.PlacementRun{Name: name, Title: title, Banned: banned}
	for _, s := range []struct {
		data string
		dst  *guestinfoState
	}{
		{"start", &pr.Start}, {"irqbalance", &pr.Irqbalance}, {"reset", &pr.Reset}, {"numairqd", &pr.Numairqd},
	} {
		st, err := r.GuestState(s.data)
		if err != nil {
			t.Errorf("%s: %v", s.data, err)
			continue
		}
		*s.dst = st
	}
	if d, ok := r.Data("plan"); ok {
		pr.Plan = d.Output
	}
	pr.IrqbalanceRC, pr.IrqbalanceS = runData(t, r, "irqbalance-run")
	pr.NumairqdRC, pr.NumairqdS = runData(t, r, "numairqd-run")
	pr.IrqbalanceLog = dataString(r, "irqbalance-log")
	pr.NumairqdLog = dataString(r, "numairqd-log")
	// The reset must give numairqd the state irqbalance started from.
	for _, d := range measure.Devices(pr.Start) {
		for _, after := range measure.Devices(pr.Reset) {
			if after.PCI == d.PCI && !after.QueueMap().Equal(d.QueueMap()) {
				t.Errorf("%s: reset did not restore %s: %v, started as %v", name, d.PCI, after.QueueMap(), d.QueueMap())
			}
		}
	}
	return pr
}

func daemonRun(t *testing.T, r *e2e.Result, daemon string, p params) measure.DaemonRun {
	dr := measure.DaemonRun{Daemon: daemon, Title: "4 nodes, virtio-net 6 pairs on node 2, CPU 5 hotplugged", Cost: map[string]measure.CostSample{}}
	if st, err := r.GuestState("start"); err == nil {
		dr.Start = st
	} else {
		t.Error(err)
	}
	periods := []string{"churn"}
	if daemon != "floor" {
		periods = []string{"idle", "churn", "offline", "online", "rebind"}
		if err := watchData(r, "settled", &dr.Settled); err != nil {
			t.Error(err)
		}
	}
	for rep := 1; rep <= p.reps; rep++ {
		for _, period := range periods {
			for _, edge := range []string{"0", "1"} {
				k := fmt.Sprintf("%s-%d-%s", period, rep, edge)
				c, err := costData(r, "cost-"+k)
				if err != nil {
					t.Error(err)
					continue
				}
				dr.Cost[k] = c
			}
		}
	}
	dr.Log = dataString(r, "daemon-log")
	if daemon == "floor" {
		dr.Floor = floorSummary(t, dr.Log, p)
		return dr
	}
	for rep := 1; rep <= p.reps; rep++ {
		for _, k := range []string{"offline", "online", "rebind"} {
			ev := measure.Event{Rep: rep, Kind: k}
			if err := watchData(r, fmt.Sprintf("watch-%d-%s", rep, k), &ev.Watch); err != nil {
				t.Error(err)
				continue
			}
			if d, ok := r.Data(fmt.Sprintf("plan-%d-%s", rep, k)); ok {
				ev.Plan = d.Output
			}
			dr.Events = append(dr.Events, ev)
		}
	}
	return dr
}

// floorSummary decodes the floor's last line; it must have handled one
// round per CPU uevent of the churn, 2 per cycle.
func floorSummary(t *testing.T, log string, p params) *measure.FloorSummary {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	var s measure.FloorSummary
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &s); err != nil {
		t.Errorf("floor: no summary (%v) in %.500q", err, log)
		return nil
	}
	if want := int64(2 * p.reps * p.churnCycles); s.Rounds != want || s.Stop != "signal" {
		t.Errorf("floor: %+v, want %d rounds and a stop by signal", s, want)
	}
	return &s
}

type guestinfoState = guestinfo.State

func watchData(r *e2e.Result, name string, w *measure.Watch) error {
	d, ok := r.Data(name)
	if !ok {
		return fmt.Errorf("guest sent no data %q", name)
	}
	if d.RC != 0 {
		return fmt.Errorf("data %q: exit status %d: %.300s", name, d.RC, d.Output)
	}
	if err := json.Unmarshal(d.Output, w); err != nil {
		return fmt.Errorf("data %q: %w", name, err)
	}
	return nil
}

func costData(r *e2e.Result, name string) (measure.CostSample, error) {
	d, ok := r.Data(name)
	if !ok || d.RC != 0 {
		return measure.CostSample{}, fmt.Errorf("data %q missing or failed", name)
	}
	c, err := measure.ParseCostSample(string(d.Output))
	if err != nil {
		return c, fmt.Errorf("data %q: %w", name, err)
	}
	return c, nil
}

// runData parses "rc t0 t1" from a *-run data call.
func runData(t *testing.T, r *e2e.Result, name string) (rc int, wallS float64) {
	d, ok := r.Data(name)
	if !ok {
		t.Errorf("guest sent no data %q", name)
		return -1, 0
	}
	f := strings.Fields(string(d.Output))
	if len(f) != 3 {
		t.Errorf("data %q: %q", name, d.Output)
		return -1, 0
	}
	rc, _ = strconv.Atoi(f[0])
	t0, _ := strconv.ParseFloat(f[1], 64)
	t1, _ := strconv.ParseFloat(f[2], 64)
	return rc, t1 - t0
}

func dataString(r *e2e.Result, name string) string {
	d, _ := r.Data(name)
	return string(d.Output)
}

// guestFiles are the files every bench guest gets besides the
// harness's: benchagent, and /usr/sbin/irqbalance running irqb when
// irqb is elsewhere. irqb itself comes with its libraries at its own
// path through Scenario.HostBins.
func guestFiles(t *testing.T, irqb string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{"/bin/benchagent": buildAgent(t)}
	if irqb != "/usr/sbin/irqbalance" {
		files["/usr/sbin/irqbalance"] = fmt.Appendf(nil, "#!/bin/sh\nexec %s \"$@\"\n", irqb)
	}
	return files
}

// irqbalanceBin is the irqbalance every bench guest runs:
// $BENCH_IRQBALANCE (bench/run.sh unpacks Debian's package there,
// never installing it), else the host's.
func irqbalanceBin(t *testing.T) string {
	t.Helper()
	p := os.Getenv("BENCH_IRQBALANCE")
	if p == "" {
		var err error
		if p, err = exec.LookPath("irqbalance"); err != nil {
			p = "/usr/sbin/irqbalance"
		}
	}
	p, err := filepath.Abs(p)
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		t.Fatalf("irqbalance (run bench/run.sh, or set BENCH_IRQBALANCE): %v", err)
	}
	return p
}

// withConfig adds /etc/numairqd.yaml: banned as banned_cpus, and the
// metrics address listen ("" disables it).
func withConfig(files map[string][]byte, banned, listen string) map[string][]byte {
	out := make(map[string][]byte, len(files)+1)
	for k, v := range files {
		out[k] = v
	}
	out["/etc/numairqd.yaml"] = fmt.Appendf(nil, "# bench: same banned list as irqbalance's IRQBALANCE_BANNED_CPULIST\nbanned_cpus: %q\nlisten: %q\n", banned, listen)
	return out
}

// baselineRev resolves $BENCH_BASELINE to a short revision; "" when
// it is unset.
func baselineRev(t *testing.T) string {
	rev := os.Getenv("BENCH_BASELINE")
	if rev == "" {
		return ""
	}
	out, err := gitIn(moduleRoot(t), "rev-parse", "--short", rev+"^{commit}")
	if err != nil {
		t.Fatalf("BENCH_BASELINE=%s: git rev-parse: %v\n%s", rev, err, out)
	}
	return strings.TrimSpace(out)
}

// buildBaseline builds numairqd at rev as the harness builds the
// working tree's (static, -trimpath), with this test binary's
// toolchain, in a temporary worktree of the repository that it removes
// afterwards.
func buildBaseline(t *testing.T, rev string) []byte {
	t.Helper()
	root, tmp := moduleRoot(t), t.TempDir()
	src := filepath.Join(tmp, "src")
	if out, err := gitIn(root, "worktree", "add", "--detach", src, rev); err != nil {
		t.Fatalf("git worktree add %s %s: %v\n%s", src, rev, err, out)
	}
	defer func() {
		if out, err := gitIn(root, "worktree", "remove", "--force", src); err != nil {
			t.Errorf("git worktree remove %s: %v\n%s", src, err, out)
		}
	}()
	start := time.Now()
	dst := filepath.Join(tmp, "numairqd")
	cmd := exec.Command("go", "build", "-trimpath", "-o", dst, "./cmd/numairqd")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOTOOLCHAIN="+runtime.Version())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build numairqd at %s: %v\n%s", rev, err, out)
	}
	t.Logf("built numairqd at %s in %v", rev, time.Since(start).Round(time.Second))
	b, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gitIn(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func buildAgent(t *testing.T) []byte {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "benchagent")
	cmd := exec.Command("go", "build", "-trimpath", "-o", dst, "./bench/benchagent")
	cmd.Dir = moduleRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build benchagent: %v\n%s", err, out)
	}
	b, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func moduleRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func firstLine(name string, args ...string) string {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil && len(out) == 0 {
		return "unknown (" + err.Error() + ")"
	}
	l, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return l
}

func hostMeta(p params, irqb string) measure.Meta {
	cmd := os.Getenv("BENCH_COMMAND")
	if cmd == "" {
		cmd = "go test -tags e2e -run TestBench ./bench/"
	}
	commit := firstLine("git", "rev-parse", "--short", "HEAD")
	if out, _ := exec.Command("git", "status", "--porcelain").Output(); len(out) > 0 {
		commit += " (with uncommitted changes)"
	}
	return measure.Meta{
		Date:        time.Now().UTC().Format("2006-01-02 15:04 MST"),
		Command:     cmd,
		HostKernel:  firstLine("uname", "-r"),
		QEMU:        firstLine("qemu-system-x86_64", "--version"),
		Irqbalance:  firstLine(irqb, "--version"),
		Go:          runtime.Version(),
		Commit:      commit,
		Reps:        p.reps,
		WindowS:     p.window.Seconds(),
		IdleS:       p.idle.Seconds(),
		ChurnCycles: p.churnCycles,
	}
}

// sampleLoad records the host's load and any QEMU that is not this
// bench's into m every 5 s until the returned function is called.
func sampleLoad(m *measure.Meta) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	sample := func() {
		if b, err := os.ReadFile("/proc/loadavg"); err == nil {
			if f := strings.Fields(string(b)); len(f) > 0 {
				if l, err := strconv.ParseFloat(f[0], 64); err == nil && l > m.LoadMax {
					m.LoadMax = l
				}
			}
		}
		m.Samples++
		cmds, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, c := range cmds {
			b, err := os.ReadFile(c)
			if err == nil && bytes.Contains(b, []byte("qemu-system")) && !bytes.Contains(b, []byte("TestBench")) {
				m.ForeignSamples++
				return
			}
		}
	}
	go func() {
		defer close(finished)
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// The traffic part: every state gets trafficWarmup under load before
// its window (irqbalance rebalances on a 10 s tick: two ticks), or
// trafficWarmupLoad for `balance: load` (numairqd samples every 5 s,
// needs 3 samples showing a gain and smooths over a 30 s half-life),
// then trafficSamples samples trafficInterval apart; the generators run
// trafficTail longer than that, and the guest waits for them to stop
// before the next state.
const (
	trafficWarmup     = 25 * time.Second
	trafficWarmupLoad = 60 * time.Second
	trafficInterval   = 5 * time.Second
	trafficSamples    = 5
	trafficWindow     = (trafficSamples - 1) * trafficInterval
	trafficTail       = 20 * time.Second
	trafficFlows      = 64
	trafficRate       = 20000
	skewSamples       = 13
)

// The states of the even-flow cases and of the skewed ones: the
// driver's placement shows nothing new once the flows are uneven.
var (
	evenStates = []string{"driver", "irqbalance", "count", "load"}
	// load-estimate is load with queue_counters: off: the interrupt
	// estimate alone, beside load's per-queue counters in the same boot.
	skewStates = []string{"irqbalance", "count", "load", "load-estimate"}
)

type trafficCase struct {
	measure.TrafficRun
	guest    e2e.Guest
	combined int // ethtool -L combined, 0 to keep the driver's count
	states   []string
	// interval and samples make the window; warmupLoad is the load
	// state's warm-up.
	interval   time.Duration
	samples    int
	warmupLoad time.Duration
}

func (tc trafficCase) warmup(state string) time.Duration {
	if state == "load" || state == "load-estimate" {
		return tc.warmupLoad
	}
	return trafficWarmup
}

func (tc trafficCase) window() time.Duration { return time.Duration(tc.samples-1) * tc.interval }

// timeout is the boot's: every state's traffic and a minute of slack
// each, plus the boot.
func (tc trafficCase) timeout() time.Duration {
	d := 2 * time.Minute
	for _, st := range tc.states {
		d += tc.warmup(st) + tc.window() + trafficTail + time.Minute
	}
	return d
}

// steadyMinutes is the stability window, BENCH_STEADY_MINUTES (10 by
// default: the "moves in 10 minutes").
func steadyMinutes() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_STEADY_MINUTES")); err == nil && v > 0 {
		return v
	}
	return 10
}

// Skewed flows. elephantsWeights over elephantsFlows flows: flows 0, 4,
// 8 and 12 weigh 8, the other 12 weigh 1, so the four elephants carry
// 32/44 of the frames. The tap hashes each flow to one of the 8 rx
// queues (the host's flow-hash secret is random per host boot, so
// which queues get them changes between host boots but not between the
// states of one run): a queue holds 0, 1 or 2 elephants and a few mice.
const (
	elephantsFlows   = 16
	elephantsWeights = "8,1,1,1"
	// The two-NIC guest: both NICs take twoNICFlows even flows, the
	// first at 3 times the second's rate (20k frames/s in all, as the
	// other cases). With 64 flows on 6 queues the flow hash alone made
	// one queue 1.6 times the others, and that queue alone set every
	// placement's peak; 1024 flows give each queue of a NIC about the
	// same share, so what differs is the NICs' rates.
	hotRate, coolRate = 15000, 5000
	twoNICFlows       = 1024
)

// twoNICGuest is FourNodeGuest with a second virtio-net of 6 pairs on
// node 2: count gives the first NIC CPUs 4,5,6,7,0,1 and the second
// 2,3,4,5,6,7 (a CPU's second queue only when every CPU has one), so
// with the first NIC hotter CPUs 4-7 carry a hot and a cool queue each.
func twoNICGuest() e2e.Guest {
	g := e2e.FourNodeGuest()
	g.Net = []e2e.NetDevice{{Node: 2, Queues: 6}, {Node: 2, Queues: 6}}
	return g
}

func trafficCases() []trafficCase {
	mk := func(name, title string, g e2e.Guest, combined int, states []string, nics ...measure.TrafficNIC) trafficCase {
		enabled := min(g.Net[0].Queues, g.NumCPUs())
		if combined > 0 {
			enabled = combined
		}
		if len(nics) == 0 {
			nics = []measure.TrafficNIC{{Flows: trafficFlows, Rate: trafficRate}}
		}
		for i := range nics {
			nics[i].PCI = g.NetAddress(i)
		}
		return trafficCase{TrafficRun: measure.TrafficRun{Name: name, Title: title, PCI: nics[0].PCI, Enabled: enabled,
			Flows: nics[0].Flows, Rate: nics[0].Rate, NICs: nics, WarmupS: trafficWarmup.Seconds()},
			guest: g, combined: combined, states: states,
			interval: trafficInterval, samples: trafficSamples, warmupLoad: trafficWarmupLoad}
	}
	elephants := measure.TrafficNIC{Flows: elephantsFlows, Rate: trafficRate, Weights: elephantsWeights}
	cases := []trafficCase{
		mk("numa4", "4 nodes x 2 vCPUs, distances 10/12/20/22, virtio-net 6 pairs on node 2", e2e.FourNodeGuest(), 0, evenStates),
		mk("mana8", "MANA-like: 4 vCPUs, virtio-net 8 pairs, all 8 enabled (ethtool -L): queues outnumber vCPUs", e2e.MANAGuest(), 8, evenStates),
		mk("mana4", "MANA-like: 4 vCPUs, virtio-net 8 pairs, the driver's 4 enabled: as many queues as vCPUs", e2e.MANAGuest(), 0, evenStates),
		mk("elephants", "MANA-like, 8 queues on 4 vCPUs, elephant flows: 4 flows of weight 8 among 12 of weight 1", e2e.MANAGuest(), 8, skewStates, elephants),
		mk("twonic", "4 nodes x 2 vCPUs, two virtio-nets of 6 pairs on node 2, the first 3x as hot", twoNICGuest(), 0, skewStates,
			measure.TrafficNIC{Flows: twoNICFlows, Rate: hotRate}, measure.TrafficNIC{Flows: twoNICFlows, Rate: coolRate}),
	}
	// The skewed cases' verdicts compare states to 10%, and one 20 s
	// window of the same placement varied by 15% between states (TCG
	// vCPUs share the host's 2 cores): a minute's window each.
	for _, i := range []int{3, 4} {
		cases[i].samples = skewSamples
	}
	cases[3].Skew = fmt.Sprintf("%d flows, weights %s repeated (flows 0, 4, 8, 12 carry 8 frames for each 1 of the others)", elephantsFlows, elephantsWeights)
	cases[4].Skew = fmt.Sprintf("%d even flows per NIC, %d and %d frames/s", twoNICFlows, hotRate, coolRate)
	if os.Getenv("BENCH_STEADY") != "0" {
		m := steadyMinutes()
		st := mk("steady", fmt.Sprintf("stability: the elephants case under load, %d minutes of steady traffic after a minute's warm-up", m), e2e.MANAGuest(), 8, []string{"load"}, elephants)
		st.Skew, st.Steady = cases[3].Skew, true
		st.interval, st.samples = time.Minute, m+1
		cases = append(cases, st)
	}
	return cases
}

// trafficFiles are the bench files plus a config per numairqd state,
// both serving metrics (the load state's counters are read there).
func trafficFiles(files map[string][]byte) map[string][]byte {
	out := withConfig(files, "", metricsAddr)
	base := fmt.Sprintf("listen: %q\n", metricsAddr)
	out["/etc/numairqd-count.yaml"] = []byte(base + "balance: count\n")
	out["/etc/numairqd-load.yaml"] = []byte(base + `balance: load
load_balance:            # the defaults, spelled out for the report
  interval: 5s
  half_life: 30s
  min_gain: 0.1
  min_drop: 0.03
  min_peak: 0.1
  samples: 3
  moves_per_minute: 6
`)
	out["/etc/numairqd-load-estimate.yaml"] = append(slices.Clone(out["/etc/numairqd-load.yaml"]), "  queue_counters: off\n"...)
	return out
}

// trafficScript runs the case's states in one boot, each from the
// driver's placement as the guest booted with it. Around each window it
// reads every NIC's per-queue rx packets (guestcheck queue-packets: the
// kernel's qstats-get, else ethtool -S; measure.ParseQueueStats)
// and, under numairqd, its balance metrics.
func trafficScript(tc trafficCase) string {
	var pcis []string
	var start strings.Builder
	for i, n := range tc.NICs {
		pcis = append(pcis, n.PCI)
		fmt.Fprintf(&start, "\ttraffic %d %d %d \"$1\" %s\n", i, n.Flows, n.Rate, n.Weights)
	}
	var warm strings.Builder
	for _, st := range tc.states {
		fmt.Fprintf(&warm, "\t%s) echo %d ;;\n", st, int(tc.warmup(st).Seconds()))
	}
	return fmt.Sprintf(`PCIS='%s' COMBINED=%d INTERVAL=%s COUNT=%d WINDOW=%d TAIL=%d STATES='%s'
METRICS=http://%s/metrics
ifname() { ls /sys/bus/pci/devices/$1/virtio*/net/ | head -n 1; }
NICS=
for pci in $PCIS; do NICS="$NICS $(ifname $pci)"; done
IF=$(ifname ${PCIS%%%% *})
start_traffic() {
%s}
warmup() {
	case $1 in
%s	esac
}
qstats() {
	echo "=== uptime $(uptime_s)"
	for pci in $PCIS; do
		i=$(ifname $pci)
		echo "=== $pci $i"
		guestcheck queue-packets -iface "$i" | grep -E '^ *rx_queue_[0-9]+_packets:'
	done
}
scrape() { wget -qO- "$METRICS" | grep -E '^numairqd_(balance_|cpu_irq_load)'; }
ip link set lo up
# The guest sends nothing (no IPv6 router solicitations): the tx queue
# IRQs stay quiet and the only frames are the generators'.
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
for i in $NICS; do
	echo 1 >"/proc/sys/net/ipv6/conf/$i/disable_ipv6"
	ip link set "$i" up
	if [ "$COMBINED" -gt 0 ]; then
		ethtool -L "$i" combined "$COMBINED" || fail channels "ethtool -L $i combined $COMBINED"
	fi
done
save_affinities /tmp/start.aff
for state in $STATES; do
	restore_affinities /tmp/start.aff
	pid=
	case $state in
	irqbalance) irqbalance --foreground >/tmp/$state.log 2>&1 & pid=$! ;;
	count | load | load-estimate) numairqd run --config /etc/numairqd-$state.yaml >/tmp/$state.log 2>&1 & pid=$! ;;
	esac
	warm=$(warmup $state)
	data "$state-warmup" echo $warm
	start_traffic $((warm + WINDOW + TAIL))
	for i in $NICS; do
		wait_for 30 rx_flowing "$i" || fail "$state-traffic" "no packet on $i"
	done
	sleep $warm
	case $state in count | load | load-estimate) data "$state-metrics-0" scrape ;; esac
	data "$state-before" guestcheck state
	data "$state-queues-0" qstats
	data "$state-samples" guestcheck sample -interval $INTERVAL -count $COUNT -iface "$IF"
	data "$state-queues-1" qstats
	data "$state-after" guestcheck state
	case $state in count | load | load-estimate) data "$state-metrics-1" scrape ;; esac
	case $state in load | load-estimate) data "$state-plan" wget -qO- "${METRICS%%/metrics}/plan" ;; esac
	if [ -n "$pid" ]; then
		kill $pid
		wait $pid
		data "$state-log" tail -c 6000 /tmp/$state.log
		data "$state-movelog" grep 'load balance moved queues' /tmp/$state.log
	fi
	for i in $NICS; do
		n=0
		while rx_flowing "$i" && [ $n -lt 120 ]; do n=$((n + 1)); done
	done
done
pass traffic-done "$STATES"
`, strings.Join(pcis, " "), tc.combined, tc.interval, tc.samples, int(tc.window().Seconds()), int(trafficTail.Seconds()),
		strings.Join(tc.states, " "), metricsAddr, start.String(), warm.String())
}

func trafficRun(t *testing.T, r *e2e.Result, tc trafficCase) measure.TrafficRun {
	tr := tc.TrafficRun
	nics := len(tc.NICs)
	if len(r.Traffic) != len(tc.states)*nics {
		t.Errorf("%d traffic runs, want %d", len(r.Traffic), len(tc.states)*nics)
	}
	for i, name := range tc.states {
		st := measure.TrafficState{Name: name, WarmupS: tc.warmup(name).Seconds()}
		var err error
		if st.Before, err = r.GuestState(name + "-before"); err != nil {
			t.Error(err)
		}
		if st.After, err = r.GuestState(name + "-after"); err != nil {
			t.Error(err)
		}
		if d, ok := r.Data(name + "-samples"); ok && d.RC == 0 {
			if st.Samples, err = guestinfo.ParseLoadSamples(bytes.NewReader(d.Output)); err != nil {
				t.Errorf("%s-samples: %v", name, err)
			}
		} else {
			t.Errorf("%s-samples: present %v, exit %d", name, ok, d.RC)
		}
		for k, dst := range []**measure.QueueStats{&st.QueuesBefore, &st.QueuesAfter} {
			key := fmt.Sprintf("%s-queues-%d", name, k)
			d, ok := r.Data(key)
			if !ok {
				t.Errorf("guest sent no data %q", key)
				continue
			}
			qs, err := measure.ParseQueueStats(string(d.Output))
			if err != nil {
				t.Errorf("%s: %v", key, err)
				continue
			}
			*dst = &qs
		}
		st.MetricsBefore = dataString(r, name+"-metrics-0")
		st.MetricsAfter = dataString(r, name+"-metrics-1")
		st.MoveLog = dataString(r, name+"-movelog")
		if d, ok := r.Data(name + "-plan"); ok && d.RC == 0 {
			if st.Daemon, err = measure.ParsePlanQueues(d.Output); err != nil {
				t.Errorf("%s-plan: %v", name, err)
			}
		}
		for k := range nics {
			if j := i*nics + k; j < len(r.Traffic) {
				st.Generators = append(st.Generators, r.Traffic[j].Summary)
			}
		}
		if len(st.Generators) > 0 {
			st.Generator = st.Generators[0]
		}
		tr.States = append(tr.States, st)
	}
	return tr
}
