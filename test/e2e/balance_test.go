//go:build e2e

package e2e

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/bench/measure"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// The balance scenario checks balance: load under skewed traffic: the
// MANA-like guest with all 8 queue pairs on its 4 vCPUs, 16 flows of
// which 4 carry 8 frames for each 1 of the others. The tap hashes flows
// to queues, so which queues are hot, and how badly count's placement
// (queue k on CPU k mod 4) stacks them, is the hash's draw, not the
// test's; the checks hold whatever the draw. (On this lab's 6.1 host
// every boot seen drew the same: per-queue packets 28k/76k/76k/0/95k/
// 95k/38k/9k in a window, count stacking two elephants on vCPU 1 and
// leaving vCPU 3 a mouse.) Per-queue load is measured outside the
// daemon: the per-queue rx packets (guestcheck queue-packets) over the
// window.
const balanceScript = `
ip link set lo up
IF=$(ls /sys/bus/pci/devices/$ADDR/virtio*/net/ | head -n 1)
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
echo 1 >"/proc/sys/net/ipv6/conf/$IF/disable_ipv6"
ip link set "$IF" up
check b-channels ethtool -L "$IF" combined 8
start_daemon --config "$CFG" --log.level debug
wp b-placed b_startup_to_placed_ms -since "$T0" -queues "@ALL_Q@" -control "@ALL_C@" -hold 500ms
traffic 0 @FLOWS@ @RATE@ @SECONDS@ @WEIGHTS@
if wait_for "$DEADLINE_S" rx_flowing "$IF"; then
	pass b-traffic-flows "rx_packets of $IF rising"
else
	fail b-traffic-flows "no packet on $IF $DEADLINE_S s after asking for traffic"
fi
sleep @WARMUP_S@
data b-moves-0 sh -c "wget -qO- $URL/metrics | grep '^numairqd_balance_moves_total'"
data b-queues-0 guestcheck queue-packets -iface "$IF"
data b-samples guestcheck sample -interval @INTERVAL@ -count @COUNT@ -iface "$IF"
data b-queues-1 guestcheck queue-packets -iface "$IF"
data b-moves-1 sh -c "wget -qO- $URL/metrics | grep '^numairqd_balance_moves_total'"
data b-plan wget -qO- "$URL/plan"
data b-netdev guestcheck netdev
alive b-alive
stop_daemon b-stop
data daemon-log cat "$LOG"
`

// The balance workload and timing: load balancing samples every 2 s,
// smooths with the default 30 s half-life and moves after 2 samples in
// a row, so 60 s of warm-up leave it several rounds of its budget (6
// moves a minute) to settle before the 20 s window.
//
// The lab's interrupt loads are a tenth of a CPU or less and scale with
// the host's speed (every vCPU is emulated on the host's 2 cores), so
// the lab config scales the absolute thresholds down with them:
// min_peak 2% and min_drop 1% of a CPU, where a production host keeps
// 10% and 3%. What keeps the daemon still on noise here is the rule
// that does so everywhere: a move must beat 3 standard errors of its
// estimated gain. balanceMinDrop and balanceMinGain are the config's,
// for the check that every logged move cleared them.
const (
	balanceFlows    = 16
	balanceWeights  = "8,1,1,1"
	balanceRate     = 20000
	balanceWarmup   = 60 * time.Second
	balanceInterval = 2 * time.Second
	balanceSamples  = 11
	balanceSeconds  = 150
	balanceMinDrop  = 0.01
	balanceMinGain  = 0.1
	balanceConfig   = "listen: \"127.0.0.1:9768\"\nbalance: load\nload_balance:\n  interval: 2s\n  samples: 2\n" +
		"  min_peak: 0.02\n  min_drop: 0.01\n  min_gain: 0.1\n"
	// nearBest is how far above the best whole-queue placement the
	// busiest vCPU's %soft may be: min_gain's 10% (a better placement
	// that gains less is not worth a move), plus what the daemon cannot
	// see: it shares a CPU's softirq time between its queues by their
	// interrupts, and a CPU's own softirq work (timers, RCU) goes to
	// whichever queues fire there.
	nearBest = 1.3
)

func TestBalance(t *testing.T) {
	g := MANAGuest()
	addr := g.NetAddress(0)
	// With all 8 pairs enabled count is linear: queue k on CPU k mod 4.
	want := g.NetPlacement(0, allCPUs(g.NumCPUs()))
	script := strings.NewReplacer(
		"@ALL_Q@", want.QueueArg(), "@ALL_C@", want.ControlList(),
		"@FLOWS@", strconv.Itoa(balanceFlows), "@RATE@", strconv.Itoa(balanceRate), "@SECONDS@", strconv.Itoa(balanceSeconds),
		"@WEIGHTS@", balanceWeights, "@WARMUP_S@", strconv.Itoa(int(balanceWarmup.Seconds())),
		"@INTERVAL@", balanceInterval.String(), "@COUNT@", strconv.Itoa(balanceSamples),
	).Replace(balanceScript)
	Run(t, Scenario{
		Name:    "balance-mana",
		Guest:   g,
		Script:  daemonScript(addr, script),
		Files:   map[string][]byte{"/etc/numairqd/numairqd.yaml": []byte(balanceConfig)},
		Timeout: 300 * time.Second,
		Expect:  []string{"b-channels", "b-placed", "b-traffic-flows", "b-alive", "b-stop"},
		Verify: func(t *testing.T, r *Result) {
			verifyBalance(t, r, len(want.Queues), g.NumCPUs())
			verifyQueueIdentity(t, r, addr)
			if t.Failed() {
				dumpDaemonLog(t, r)
			}
		},
	})
}

var rxQueuePackets = regexp.MustCompile(`^\s*rx_queue_(\d+)_packets:\s*(\d+)\s*$`)

// queuePackets parses the rx_queue_K_packets lines of guestcheck
// queue-packets (ethtool -S's form on 6.1; from qstats-get on 6.12,
// whose virtio_net has no per-queue packets in ethtool -S).
func queuePackets(out []byte) map[int]uint64 {
	m := map[int]uint64{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if f := rxQueuePackets.FindStringSubmatch(sc.Text()); f != nil {
			k, _ := strconv.Atoi(f[1])
			n, _ := strconv.ParseUint(f[2], 10, 64)
			m[k] = n
		}
	}
	return m
}

func verifyBalance(t *testing.T, r *Result, queues, cpus int) {
	t.Helper()
	q0, ok0 := r.Data("b-queues-0")
	q1, ok1 := r.Data("b-queues-1")
	if !r.Check("b-queue-stats", ok0 && ok1 && q0.RC == 0 && q1.RC == 0, "per-queue packets at both ends of the window: %v %v", ok0, ok1) {
		return
	}
	before, after := queuePackets(q0.Output), queuePackets(q1.Output)
	load := make([]float64, queues)
	total := 0.0
	for k := range queues {
		load[k] = float64(after[k] - before[k])
		total += load[k]
	}
	if !r.Check("b-packets", total > 0, "rx packets per queue over the window: %v", load) {
		return
	}
	d, ok := r.Data("b-samples")
	if !r.Check("b-samples-data", ok && d.RC == 0, "guestcheck sample: present %v, exit %d", ok, d.RC) {
		return
	}
	samples, err := guestinfo.ParseLoadSamples(strings.NewReader(string(d.Output)))
	if !r.Check("b-samples-parsed", err == nil && len(samples) == balanceSamples, "%d samples, want %d: %v", len(samples), balanceSamples, err) {
		return
	}
	// Where each queue's rx IRQ was at the end of the window.
	cpuOf := make([]int, queues)
	for k := range cpuOf {
		cpuOf[k] = -1
	}
	last := samples[len(samples)-1]
	for _, q := range last.IRQs {
		m := rxQueueName.FindStringSubmatch(q.Actions[0])
		if m == nil {
			continue
		}
		k, _ := strconv.Atoi(m[1])
		if c, err := strconv.Atoi(q.Affinity); err == nil && k < queues {
			cpuOf[k] = c
		}
	}
	if !r.Check("b-single-cpus", !slices.Contains(cpuOf, -1), "rx queue IRQs each on one CPU at the end: %v", cpuOf) {
		return
	}
	got := peakOf(load, cpuOf, cpus)
	count := make([]int, queues)
	for k := range count {
		count[k] = k % cpus
	}
	mean := total / float64(cpus)
	// The bench's bound (exact branch and bound), as a peak.
	bound, _ := measure.Bound(load, make([]float64, cpus))
	best := bound * mean
	r.Metric("b_peak_over_mean", got/mean)
	r.Metric("b_count_peak_over_mean", peakOf(load, count, cpus)/mean)
	r.Metric("b_best_peak_over_mean", best/mean)
	w, err := guestinfo.LoadSeries(samples)
	if err == nil {
		for _, c := range w.CPUs {
			r.Metric(fmt.Sprintf("b_cpu%d_soft_pct", c.CPU), c.SoftPct)
		}
	}
	// The two busiest queues never share a CPU: that is what count gets
	// wrong when the hash puts them k and k+4 apart.
	order := make([]int, queues)
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(load[b], load[a]) })
	r.Check("b-hot-apart", cpuOf[order[0]] != cpuOf[order[1]], "busiest queues %d (%.0f packets) and %d (%.0f) on CPUs %d and %d",
		order[0], load[order[0]], order[1], load[order[1]], cpuOf[order[0]], cpuOf[order[1]])
	// Near the best in CPU time, which is what placement is for: each
	// vCPU's %soft is a base every vCPU carries (timers, RCU, the
	// scheduler: no placement moves it) plus a cost per packet it
	// served, fitted over the vCPUs; the best whole-queue placement's
	// busiest vCPU then has the base plus the cost of its packets.
	// Packets alone would count the base as movable: with a base of a
	// tenth of a CPU on every vCPU, a placement at 1.5 of the best by
	// packets can be within 1.2 of it in CPU time. A queue's packets
	// are served where its interrupts fired in the window, which lags
	// smp_affinity_list after a move until the next interrupt (a busy
	// NAPI queue polls and rarely takes one).
	perCPU := make([]float64, cpus)
	soft := make([]float64, cpus)
	if err == nil {
		for _, c := range w.CPUs {
			if c.CPU < cpus {
				soft[c.CPU] = c.SoftPct
			}
		}
		for _, q := range w.IRQs {
			m := rxQueueName.FindStringSubmatch(q.Actions[0])
			if m == nil || q.Total == 0 {
				continue
			}
			k, _ := strconv.Atoi(m[1])
			for c, n := range q.Counts {
				if k < queues && c < cpus {
					perCPU[c] += load[k] * float64(n) / float64(q.Total)
				}
			}
		}
	}
	base, perPkt := fitLine(perCPU, soft)
	bestSoft := base + perPkt*best
	r.Metric("b_soft_base_pct", base)
	r.Metric("b_soft_peak_over_best", slices.Max(soft)/bestSoft)
	// A placement whose busiest CPU serves no more packets than the
	// best one's is the best; %soft above it is then the noise of vCPU
	// threads the host starves unevenly, which no placement moves.
	r.Check("b-near-best", slices.Max(soft) <= nearBest*bestSoft || got <= best*(1+1e-9),
		"busiest vCPU %.1f%% soft, the best whole-queue placement's %.1f%% (%.2f of it, at most %.2f; %%soft = %.1f + %.3g x packets, "+
			"fitted over vCPUs at %v%% with packets %v); by packets alone %.0f against a best of %.0f (%.2f); queues %v on CPUs %v; count would give %.0f packets",
		slices.Max(soft), bestSoft, slices.Max(soft)/bestSoft, nearBest, base, perPkt, soft, perCPU, got, best, got/best, load, cpuOf, peakOf(load, count, cpus))

	m0, _ := r.Data("b-moves-0")
	m1, _ := r.Data("b-moves-1")
	moves := func(d Data) float64 {
		for _, l := range strings.Split(string(d.Output), "\n") {
			if v, ok := strings.CutPrefix(l, `numairqd_balance_moves_total{reason="load"} `); ok {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err == nil {
					return f
				}
			}
		}
		return math.NaN()
	}
	a, b := moves(m0), moves(m1)
	r.Metric("b_moves_before_window", a)
	r.Metric("b_moves_in_window", b-a)
	// Steady traffic, settled placement: at most one step in the window.
	r.Check("b-steady", b-a <= 2, "load moves before the window %v, during its %v: %v", a, balanceInterval*(balanceSamples-1), b-a)

	// The daemon's own view at the end: its loads, and the proposal it
	// had or not, for the log.
	if d, ok := r.Data("b-plan"); ok {
		var doc struct {
			Balance json.RawMessage `json:"balance"`
		}
		if err := json.Unmarshal(d.Output, &doc); err == nil {
			t.Logf("numairqd's balance view at the window's end: %s", doc.Balance)
		}
	}

	// No move without a real gain: every step the daemon logged lowered
	// its estimate of the busiest CPU's load by min_drop, by min_gain of
	// it and by more than 3 standard errors of the drop. (A draw that
	// count already places near the best needs no step at all.)
	if l, ok := r.Data("daemon-log"); ok {
		steps, bad := loadSteps(l.Output)
		r.Metric("b_load_steps", len(steps))
		r.Check("b-moves-real", len(bad) == 0,
			"%d load steps logged (peak before -> after ± noise): %v; below min_drop %v, min_gain %v or 3 standard errors: %v",
			len(steps), steps, balanceMinDrop, balanceMinGain, bad)
	}
}

// loadStep is one "load balance moved queues" line of the daemon's log.
type loadStep struct {
	Moves              int
	Before, After, Err float64
}

func (s loadStep) String() string {
	return fmt.Sprintf("%d moves %.4f->%.4f±%.4f", s.Moves, s.Before, s.After, s.Err)
}

// loadSteps parses the daemon's JSON log for its load steps, and
// returns those whose gain is not a real one by the daemon's rule.
func loadSteps(log []byte) (steps, bad []loadStep) {
	for _, l := range strings.Split(string(log), "\n") {
		if !strings.Contains(l, `"msg":"load balance moved queues"`) {
			continue
		}
		var f struct {
			Moves  int     `json:"moves"`
			Before float64 `json:"peak_before"`
			After  float64 `json:"peak_after"`
			Noise  float64 `json:"noise"`
		}
		st := loadStep{Moves: -1}
		if err := json.Unmarshal([]byte(l), &f); err == nil {
			st = loadStep{Moves: f.Moves, Before: f.Before, After: f.After, Err: f.Noise}
		}
		steps = append(steps, st)
		drop := st.Before - st.After
		if st.Moves <= 0 || drop < balanceMinDrop || drop < balanceMinGain*st.Before || drop <= 3*st.Err {
			bad = append(bad, st)
		}
	}
	return steps, bad
}

// fitLine is the least-squares y = a + b x with a and b at least 0.
func fitLine(x, y []float64) (a, b float64) {
	n := float64(len(x))
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx += x[i]
		sy += y[i]
		sxx += x[i] * x[i]
		sxy += x[i] * y[i]
	}
	if d := n*sxx - sx*sx; d > 0 {
		b = (n*sxy - sx*sy) / d
	}
	if b <= 0 {
		return max(0, sy/n), 0
	}
	a = (sy - b*sx) / n
	if a < 0 && sxx > 0 {
		return 0, max(0, sxy/sxx)
	}
	return a, b
}

// peakOf is the busiest CPU's load with queue k on cpuOf[k].
func peakOf(load []float64, cpuOf []int, cpus int) float64 {
	per := make([]float64, cpus)
	for k, c := range cpuOf {
		if c >= 0 && c < cpus {
			per[c] += load[k]
		}
	}
	return slices.Max(per)
}
