//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// The two-NIC scenario checks the planner's placement objective where
// numa-hop devices compete for the near CPUs: FourNodeGuest with two
// virtio-nets of twoNICPairs queue pairs on node 2, whose queues
// together outnumber the CPUs of node 2 and of its nearest node 3. Each
// driver alone would spread its queue k on the k-th CPU of node 2's hop
// order (Guest.DriverQueues); numairqd may even out the load, but no
// queue may go farther from node 2 than that spread puts it (the
// exception, farther within the physical package of the drivers' CPU,
// is no exception here: each node is a package of its own), and no CPU
// may hold more queue IRQs than the two spreads put there together.
//
// One boot takes six states: the driver's own (before numairqd, figures
// only: virtio-net spreads by CPU id, not by hop order), numairqd's
// first round, CPU twoNICHotplugCPU offline, back online, one NIC
// unbound, and bound again. After each action the script waits until
// the daemon's newer /plan is in place and holds (guestcheck
// wait-plan: the host cannot name the placement in advance, only its
// bound), then sends the state and the plan. The host judges each
// state against the drivers' spreads over the CPUs online in it and
// prints, as figures, the mean distance and the busiest CPU's queue
// IRQs of the placement and of the drivers' spreads.
const twoNICScript = `
ip link set lo up
# settle STEP ARGS...: guestcheck wait-plan with ARGS (the action, then
# the devices), then the state and the plan as data STEP-state and
# STEP-plan, sent whether or not the daemon settled.
settle() {
	_s=$1
	shift
	_out=$(guestcheck wait-plan -url "$URL/plan" -pairs @PAIRS@ -timeout "${DEADLINE_S}s" -hold 1s "$@" 2>&1)
	_rc=$?
	_ms=$(echo "$_out" | sed -n 's/^[A-Z]* ms=\([0-9.]*\).*/\1/p' | head -n 1)
	[ -n "$_ms" ] && metric "t_${_s}_settled_ms" "$_ms"
	if [ "$_rc" = 0 ]; then pass "t-$_s-settled" "$_out"; else fail "t-$_s-settled" "$_out"; fi
	data "$_s-state" guestcheck state
	data "$_s-plan" wget -q -O - "$URL/plan"
}
data driver-state guestcheck state
start_daemon --config "$CFG"
settle start -after 0 -pci @NIC0@ -pci @NIC1@
alive t-start-alive
settle offline -write /sys/devices/system/cpu/cpu@CPU@/online=0 -pci @NIC0@ -pci @NIC1@
settle online -write /sys/devices/system/cpu/cpu@CPU@/online=1 -pci @NIC0@ -pci @NIC1@
settle unbound -write /sys/bus/pci/drivers/virtio-pci/unbind=@REBIND@ -pci @KEPT@ -gone @REBIND@
settle rebound -write /sys/bus/pci/drivers/virtio-pci/bind=@REBIND@ -pci @NIC0@ -pci @NIC1@
alive t-alive
stop_daemon t-stop
data daemon-log cat "$LOG"
`

const (
	// twoNICPairs is each NIC's queue pairs: 2 x 4 = 8 queues on node 2,
	// which with node 3 has 4 CPUs.
	twoNICPairs = 4
	// twoNICHotplugCPU is node 2's second CPU: offline, node 2 has one.
	twoNICHotplugCPU = 5
	// twoNICRebind is the NIC unbound and bound again: the first, so
	// that it comes back after the other has had the node to itself.
	twoNICRebind = 0
)

// twoNICGuest is FourNodeGuest with two virtio-nets of twoNICPairs
// queue pairs on node 2 (its NVMe stays on node 1: managed queues,
// which move nothing numairqd places).
func twoNICGuest() Guest {
	g := FourNodeGuest()
	g.Net = []NetDevice{{Node: 2, Queues: twoNICPairs}, {Node: 2, Queues: twoNICPairs}}
	return g
}

// twoNICStep is one state of the scenario: the prefix of its data and
// checks, the CPUs online and the NICs bound in it.
type twoNICStep struct {
	name   string
	online []int
	nics   []int // indices into Guest.Net
}

func twoNICSteps(g Guest) []twoNICStep {
	all := allCPUs(g.NumCPUs())
	both := []int{0, 1}
	return []twoNICStep{
		{"start", all, both},
		{"offline", without(all, twoNICHotplugCPU), both},
		{"online", all, both},
		{"unbound", all, without(both, twoNICRebind)},
		{"rebound", all, both},
	}
}

func TestTwoNICsOneNode(t *testing.T) {
	g := twoNICGuest()
	kept := g.NetAddress(1 - twoNICRebind)
	script := strings.NewReplacer(
		"@PAIRS@", strconv.Itoa(twoNICPairs), "@CPU@", strconv.Itoa(twoNICHotplugCPU),
		"@NIC0@", g.NetAddress(0), "@NIC1@", g.NetAddress(1),
		"@REBIND@", g.NetAddress(twoNICRebind), "@KEPT@", kept,
	).Replace(twoNICScript)
	steps := twoNICSteps(g)
	expect := []string{"t-start-alive", "t-alive", "t-stop"}
	for _, st := range steps {
		expect = append(expect, "t-"+st.name+"-settled")
	}
	Run(t, Scenario{
		Name:    "twonic",
		Guest:   g,
		Script:  daemonScript(g.NetAddress(0), script),
		Files:   map[string][]byte{"/etc/numairqd/numairqd.yaml": []byte("listen: \"127.0.0.1:9768\"\n")},
		Timeout: 240 * time.Second,
		Expect:  expect,
		Verify: func(t *testing.T, r *Result) {
			// The driver's own placement, before numairqd: figures.
			if s, err := r.GuestState("driver-state"); err == nil {
				j := g.judgeSpread(s, []int{0, 1}, allCPUs(g.NumCPUs()))
				t.Logf("virtio-net's own placement, before numairqd (figures, not checked):\n%s", j)
				r.Metric("driver_virtio_mean_distance", j.mean)
				r.Metric("driver_virtio_max_per_cpu", j.max)
			}
			for _, st := range steps {
				t.Run(st.name, func(t *testing.T) { verifyTwoNICStep(r.forSubtest(t), g, st) })
			}
			if t.Failed() {
				dumpDaemonLog(t, r)
			}
		},
	})
}

// verifyTwoNICStep checks one state against the drivers' spreads: the
// CPUs online are the step's, each NIC has its queue IRQs and /plan
// gives it numa-hop, no queue IRQ is farther from its NIC's node than
// the drivers' spread puts its queue, and the busiest CPU holds no more
// queue IRQs than the spreads put on theirs. The mean distance and the
// busiest CPU's count, numairqd's and the drivers', are printed.
func verifyTwoNICStep(r *Result, g Guest, st twoNICStep) {
	t := r.t
	s, err := r.GuestState(st.name + "-state")
	if !r.Check(st.name+"-state", err == nil, "%v", err) {
		return
	}
	r.Check(st.name+"-online", slices.Equal(s.Online, st.online), "online %v, want %v", s.Online, st.online)
	if d, ok := r.Data(st.name + "-plan"); r.Check(st.name+"-plan-data", ok && d.RC == 0, "GET /plan: exit %d: %.200s", d.RC, d.Output) {
		p, err := decodePlan(d.Output)
		var policies []string
		ok := err == nil
		for _, i := range st.nics {
			pol := ""
			for _, dev := range p.Devices {
				if dev.PCI == g.NetAddress(i) {
					pol = dev.Policy
				}
			}
			ok = ok && pol == "numa-hop"
			policies = append(policies, fmt.Sprintf("%s %q", g.NetAddress(i), pol))
		}
		r.Check(st.name+"-numa-hop", ok, "%v; policies %s; want numa-hop (%d pairs, fewer than %d CPUs)",
			err, strings.Join(policies, ", "), twoNICPairs, len(st.online))
		if err == nil {
			diff := g.driversDiff(p, st.nics, st.online)
			r.Check(st.name+"-plan-drivers-cpu", diff == "", "/plan's drivers_cpu of each queue IRQ vs the host's spreads: %s", orOK(diff))
			t.Logf("%s: /plan says stacking %+v, drivers_stacking %+v", st.name, p.Stacking, p.DriversStacking)
			r.Metric(st.name+"_plan_stacking_cpu", p.Stacking.CPU)
			r.Metric(st.name+"_plan_drivers_stacking_cpu", p.DriversStacking.CPU)
		}
	}
	j := g.judgeSpread(s, st.nics, st.online)
	t.Logf("%s:\n%s", st.name, j)
	r.Check(st.name+"-queue-irqs", len(j.missing) == 0, "every NIC's 2 x %d queue IRQs: %s", twoNICPairs, orNone(j.missing))
	r.Check(st.name+"-within-drivers-distance", len(j.farther) == 0 && j.irqs > 0,
		"%d queue IRQs; farther from node %d than the drivers' spread puts their queue: %s",
		j.irqs, g.Net[0].Node, orNone(j.farther))
	r.Check(st.name+"-max-per-cpu", j.max <= j.driversMax && j.irqs > 0,
		"busiest CPU holds %d queue IRQs (per CPU %v), the drivers' spreads together %d (per CPU %v)",
		j.max, j.perCPU, j.driversMax, j.driversPerCPU)
	r.Metric(st.name+"_mean_distance", j.mean)
	r.Metric(st.name+"_max_per_cpu", j.max)
	r.Metric(st.name+"_drivers_mean_distance", j.driversMean)
	r.Metric(st.name+"_drivers_max_per_cpu", j.driversMax)
}

// driversDiff compares the drivers_cpu /plan gives each queue IRQ of
// the NICs nics with the host's Guest.DriverQueues over online: the
// daemon reports the reference it placed against, which must be the
// one the host derives. It returns "" when they agree.
func (g Guest) driversDiff(p planDoc, nics, online []int) string {
	var diffs []string
	for _, i := range nics {
		spread, addr := g.DriverQueues(i, online), g.NetAddress(i)
		n := 0
		for _, d := range p.Devices {
			if d.PCI != addr {
				continue
			}
			for _, q := range d.IRQs {
				if q.Queue == nil || queueIndex.FindStringSubmatch(q.Name) == nil {
					continue
				}
				n++
				k := *q.Queue
				switch {
				case q.DriversCPU == nil:
					diffs = append(diffs, fmt.Sprintf("%s irq %d %s: no drivers_cpu", addr, q.IRQ, q.Name))
				case k < 0 || k >= len(spread):
					diffs = append(diffs, fmt.Sprintf("%s irq %d %s: queue %d of %d", addr, q.IRQ, q.Name, k, len(spread)))
				case *q.DriversCPU != spread[k]:
					diffs = append(diffs, fmt.Sprintf("%s irq %d %s: drivers_cpu %d, the host's %d", addr, q.IRQ, q.Name, *q.DriversCPU, spread[k]))
				}
			}
		}
		if n != 2*len(spread) {
			diffs = append(diffs, fmt.Sprintf("%s: %d queue IRQs in /plan, want %d", addr, n, 2*len(spread)))
		}
	}
	return strings.Join(diffs, "; ")
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, "; ")
}

// spreadJudgement is a state's queue IRQs of some NICs against the
// drivers' spreads over the same online CPUs.
type spreadJudgement struct {
	irqs    int      // queue IRQs judged
	farther []string // queue IRQs farther than the drivers' spread puts their queue
	missing []string // queue IRQs a NIC lacks, or has beyond its queues
	lines   []string // one per queue pair: where it is and where the drivers put it
	// perCPU and driversPerCPU count queue IRQs by CPU (the first CPU
	// of each IRQ's smp_affinity_list); max and driversMax are their
	// largest counts.
	perCPU, driversPerCPU map[int]int
	max, driversMax       int
	// mean and driversMean are the mean distance from the NIC's node
	// to its queue IRQs' CPUs.
	mean, driversMean float64
}

func (j spreadJudgement) String() string {
	return fmt.Sprintf("%s\n  per CPU %v (max %d, mean distance %.2f); drivers' spreads per CPU %v (max %d, mean distance %.2f)",
		strings.Join(j.lines, "\n"), j.perCPU, j.max, j.mean, j.driversPerCPU, j.driversMax, j.driversMean)
}

// judgeSpread judges where s has the queue IRQs (virtioN-input.K and
// -output.K) of the NICs nics, with online the CPUs online: an IRQ is
// on the first CPU of its smp_affinity_list, and its distance is that
// from its NIC's node to that CPU's node, which may be no more than the
// distance to the CPU of queue K in the NIC's own spread
// (Guest.DriverQueues). The drivers' counts are those spreads summed,
// two IRQs per queue pair.
func (g Guest) judgeSpread(s guestinfo.State, nics, online []int) spreadJudgement {
	j := spreadJudgement{perCPU: map[int]int{}, driversPerCPU: map[int]int{}}
	var dist, driversDist int
	for _, i := range nics {
		addr, node := g.NetAddress(i), g.Net[i].Node
		spread := g.DriverQueues(i, online)
		for _, c := range spread {
			j.driversPerCPU[c] += 2
			driversDist += 2 * g.Dist(node, g.NodeOf(c))
		}
		seen := map[string]int{} // "input.K" -> CPU
		for _, q := range netIRQs(s, addr) {
			name := q.Actions[0]
			m := queueIndex.FindStringSubmatch(name)
			if m == nil {
				continue
			}
			k, _ := strconv.Atoi(m[1])
			dir := "input"
			if strings.Contains(name, "-output.") {
				dir = "output"
			}
			if k >= len(spread) {
				j.missing = append(j.missing, fmt.Sprintf("%s irq %d %s: queue %d of %d", addr, q.Number, name, k, len(spread)))
				continue
			}
			mask, err := cpumask.ParseList(q.Affinity)
			cpu := mask.First()
			if err != nil || cpu < 0 {
				j.farther = append(j.farther, fmt.Sprintf("%s irq %d %s: smp_affinity_list %q", addr, q.Number, name, q.Affinity))
				continue
			}
			seen[fmt.Sprintf("%s.%d", dir, k)] = cpu
			j.irqs++
			j.perCPU[cpu]++
			d, bound := g.Dist(node, g.NodeOf(cpu)), g.Dist(node, g.NodeOf(spread[k]))
			dist += d
			if d > bound {
				j.farther = append(j.farther, fmt.Sprintf("%s irq %d %s on %s (distance %d), the drivers' queue %d on %d (distance %d)",
					addr, q.Number, name, q.Affinity, d, k, spread[k], bound))
			}
		}
		for k, c := range spread {
			var at []string
			for _, dir := range []string{"input", "output"} {
				key := fmt.Sprintf("%s.%d", dir, k)
				cpu, ok := seen[key]
				if !ok {
					j.missing = append(j.missing, fmt.Sprintf("%s: no %s IRQ", addr, key))
					at = append(at, "-")
					continue
				}
				at = append(at, fmt.Sprintf("%d (%d)", cpu, g.Dist(node, g.NodeOf(cpu))))
			}
			j.lines = append(j.lines, fmt.Sprintf("  nic %d %s queue %d: input on %s, output on %s; drivers' %d (%d)",
				i, addr, k, at[0], at[1], c, g.Dist(node, g.NodeOf(c))))
		}
	}
	for _, n := range j.perCPU {
		j.max = max(j.max, n)
	}
	for _, n := range j.driversPerCPU {
		j.driversMax = max(j.driversMax, n)
	}
	if j.irqs > 0 {
		j.mean = float64(dist) / float64(j.irqs)
	}
	if n := 2 * len(j.lines); n > 0 {
		j.driversMean = float64(driversDist) / float64(n)
	}
	return j
}

// twoNICState is a guest state of twoNICGuest whose NIC i has queue
// pair k on cpus[i][k], IRQs numbered from 30 per NIC as virtio-net
// requests them (config, then input.K and output.K).
func twoNICState(g Guest, cpus ...[]int) guestinfo.State {
	var s guestinfo.State
	n := 30
	for i, qs := range cpus {
		dev := guestinfo.PCIDevice{Address: g.NetAddress(i), NUMANode: g.Net[i].Node}
		add := func(name, list string) {
			s.IRQs = append(s.IRQs, guestinfo.IRQ{Number: n, Actions: []string{name}, Affinity: list})
			dev.MSIIRQs = append(dev.MSIIRQs, n)
			n++
		}
		add(fmt.Sprintf("virtio%d-config", i), "4-5")
		for k, c := range qs {
			add(fmt.Sprintf("virtio%d-input.%d", i, k), strconv.Itoa(c))
			add(fmt.Sprintf("virtio%d-output.%d", i, k), strconv.Itoa(c))
		}
		s.PCI = append(s.PCI, dev)
	}
	return s
}

// TestJudgeSpread checks the host's judgement on placements made up for
// twoNICGuest, booting nothing.
func TestJudgeSpread(t *testing.T) {
	g := twoNICGuest()
	all := allCPUs(8)
	if got := g.DriverQueues(0, all); !slices.Equal(got, []int{4, 5, 6, 7}) {
		t.Errorf("DriverQueues all online = %v", got)
	}
	if got := g.DriverQueues(1, without(all, 5)); !slices.Equal(got, []int{4, 6, 7, 0}) {
		t.Errorf("DriverQueues cpu 5 offline = %v", got)
	}
	for _, tc := range []struct {
		name        string
		online      []int
		cpus        [][]int
		farther     int
		missing     int
		max, dMax   int
		mean, dMean float64
	}{
		{"drivers' own", all, [][]int{{4, 5, 6, 7}, {4, 5, 6, 7}}, 0, 0, 4, 4, 11, 11},
		// Queues 0-1 of both on node 2, 2-3 on node 3, one pair a CPU
		// each where it can.
		{"evened within", all, [][]int{{4, 5, 6, 7}, {5, 4, 7, 6}}, 0, 0, 4, 4, 11, 11},
		// The old rule's even count: the second NIC on nodes 0 and 1.
		{"second NIC far", all, [][]int{{4, 5, 6, 7}, {0, 1, 2, 3}}, 8, 0, 2, 4, 16, 11},
		{"stacked", all, [][]int{{4, 4, 4, 4}, {4, 4, 4, 4}}, 0, 0, 16, 4, 10, 11},
		{"queue 1 on node 3", all, [][]int{{4, 6, 6, 7}, {4, 5, 6, 7}}, 2, 0, 6, 4, 11.25, 11},
		{"cpu 5 offline", without(all, 5), [][]int{{4, 6, 7, 0}, {4, 7, 6, 1}}, 0, 0, 4, 4, 13.5, 13.5},
		{"missing pair", all, [][]int{{4, 5, 6}, {4, 5, 6, 7}}, 0, 2, 4, 4, 76.0 / 7, 11},
	} {
		j := g.judgeSpread(twoNICState(g, tc.cpus...), []int{0, 1}, tc.online)
		if len(j.farther) != tc.farther || len(j.missing) != tc.missing || j.max != tc.max || j.driversMax != tc.dMax ||
			j.mean != tc.mean || j.driversMean != tc.dMean {
			t.Errorf("%s: %d farther, %d missing, max %d drivers %d, mean %v drivers %v; want %d, %d, %d %d, %v %v\n%s",
				tc.name, len(j.farther), len(j.missing), j.max, j.driversMax, j.mean, j.driversMean,
				tc.farther, tc.missing, tc.max, tc.dMax, tc.mean, tc.dMean, j)
		}
	}
	// One NIC alone (the other unbound) is judged against its own spread.
	j := g.judgeSpread(twoNICState(g, []int{4, 5, 6, 7}), []int{0}, all)
	if j.irqs != 8 || j.max != 2 || j.driversMax != 2 || len(j.farther) != 0 || len(j.missing) != 0 {
		t.Errorf("one NIC: %+v", j)
	}
}

// TestDriversDiff: /plan's drivers_cpu is compared queue by queue with
// the host's spreads; a missing key or IRQ is a difference.
func TestDriversDiff(t *testing.T) {
	g := twoNICGuest()
	doc := func(cpus ...string) planDoc {
		var irqs []string
		for k, c := range cpus {
			for _, dir := range []string{"input", "output"} {
				irqs = append(irqs, fmt.Sprintf(`{"irq":%d,"name":"virtio0-%s.%d","queue":%d,"planned":"4"%s}`, 30+len(irqs), dir, k, k, c))
			}
		}
		p, err := decodePlan([]byte(`{"devices":[{"pci":"0000:41:00.0","irqs":[` + strings.Join(irqs, ",") + `]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	all := allCPUs(8)
	for _, tc := range []struct {
		name  string
		p     planDoc
		diffs int
	}{
		{"agree", doc(`,"drivers_cpu":4`, `,"drivers_cpu":5`, `,"drivers_cpu":6`, `,"drivers_cpu":7`), 0},
		{"other cpu", doc(`,"drivers_cpu":4`, `,"drivers_cpu":6`, `,"drivers_cpu":6`, `,"drivers_cpu":7`), 2},
		{"no key", doc(``, `,"drivers_cpu":5`, `,"drivers_cpu":6`, `,"drivers_cpu":7`), 2},
		{"missing pair", doc(`,"drivers_cpu":4`, `,"drivers_cpu":5`, `,"drivers_cpu":6`), 1},
	} {
		diff := g.driversDiff(tc.p, []int{0}, all)
		if n := len(strings.Split(diff, "; ")); diff == "" && tc.diffs != 0 || diff != "" && n != tc.diffs {
			t.Errorf("%s: %q, want %d differences", tc.name, diff, tc.diffs)
		}
	}
}
