//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// crioDebianEnv is irqbalance's environment file as Debian ships it:
// its variables commented out, so cri-o appends its own line.
const crioDebianEnv = `# irqbalance is a daemon process that distributes interrupts across
# CPUs on SMP systems.
#IRQBALANCE_ONESHOT=
#IRQBALANCE_BANNED_CPUS=
#IRQBALANCE_ARGS=
`

// crioStart writes what cri-o's PreStart hook writes for a Guaranteed
// pod on CPUs 4-7 annotated cpu-load-balancing.crio.io: disable and
// irq-load-balancing.crio.io: housekeeping (internal/runtimehandlerhooks
// at cri-o f954a17, high_performance_hooks_linux.go): first the
// partition (setCPULoadBalancingV2: each cgroup from the top,
// cpuset.cpus then cpuset.cpus.exclusive, values as cpuset.String()
// without a newline, then "isolated" to the container's
// cpuset.cpus.partition; only with PARTS=1, 6.8+), then the IRQ bans
// (setIRQLoadBalancing less the housekeeping CPU 4, the first and, with
// one thread a core, its only sibling): default_smp_affinity "ff" less
// 5-7 as cri-o formats it, then IRQBALANCE_BANNED_CPUS, its complement,
// appended to the environment file, which os.WriteFile rewrites in
// place. cri-o would then restart irqbalance or run it --oneshot; here
// there is none, as on a node where numairqd replaces it.
const crioStart = `set -e
CG=/sys/fs/cgroup K=$CG/kubepods.slice P=$CG/kubepods.slice/kubepods-pod1.slice C=$CG/kubepods.slice/kubepods-pod1.slice/crio-1.scope
if [ "$PARTS" = 1 ]; then
	printf %s 0-7 >$K/cpuset.cpus; printf %s 4-7 >$K/cpuset.cpus.exclusive
	printf %s 0-7 >$P/cpuset.cpus; printf %s 4-7 >$P/cpuset.cpus.exclusive
	printf %s 4-7 >$C/cpuset.cpus.exclusive
	printf %s isolated >$C/cpuset.cpus.partition
fi
printf %s 0000001f >/proc/irq/default_smp_affinity
{ cat /etc/default/irqbalance; printf '\nIRQBALANCE_BANNED_CPUS="000000e0"\n'; } >/tmp/irqbalance.new
cat /tmp/irqbalance.new >/etc/default/irqbalance
`

// crioStop is cri-o's PostStop for that pod: the IRQ bans lifted first
// (all the container's CPUs back; the line replaced in place), then
// the exclusive CPUs taken back from the bottom (an empty set written as
// "\n"), and the container's cgroup gone, as systemd removes it.
const crioStop = `CG=/sys/fs/cgroup K=$CG/kubepods.slice P=$CG/kubepods.slice/kubepods-pod1.slice C=$CG/kubepods.slice/kubepods-pod1.slice/crio-1.scope
set -e
printf %s 000000ff >/proc/irq/default_smp_affinity
sed 's/^IRQBALANCE_BANNED_CPUS=.*/IRQBALANCE_BANNED_CPUS="00000000"/' /etc/default/irqbalance >/tmp/irqbalance.new
cat /tmp/irqbalance.new >/etc/default/irqbalance
set +e
if [ "$PARTS" = 1 ]; then
	printf '\n' >$C/cpuset.cpus.exclusive 2>/dev/null
	rmdir $C
	printf '\n' >$P/cpuset.cpus.exclusive; printf '\n' >$K/cpuset.cpus.exclusive
fi
exit 0
`

// The crio scenario: a housekeeping pod started and stopped while the
// daemon runs, as cri-o writes it. Every device IRQ the daemon may
// move leaves the banned CPUs 5-7, the housekeeping CPU 4 (the NIC's
// node's) keeps its queues, and all come back after the stop. How long
// each took is a figure (crio_*_ms).
const crioScript = `
ip link set lo up
export PARTS=@PARTS@
CG=/sys/fs/cgroup
if [ "$PARTS" = 1 ]; then
	grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none "$CG"
	echo +cpuset >"$CG/cgroup.subtree_control"
	mkdir -p $CG/kubepods.slice/kubepods-pod1.slice/crio-1.scope
	echo +cpuset >$CG/kubepods.slice/cgroup.subtree_control
	echo +cpuset >$CG/kubepods.slice/kubepods-pod1.slice/cgroup.subtree_control
	printf %s 4-7 >$CG/kubepods.slice/kubepods-pod1.slice/crio-1.scope/cpuset.cpus
fi
expect_eq crio-before "$(cat /proc/irq/default_smp_affinity)" "ff"
start_daemon --config "$CFG"
wp crio-placed crio_startup_to_placed_ms -since "$T0" -queues "@ALL_Q@" -control "@ALL_C@" -hold 500ms
wp crio-started crio_pod_start_to_placed_ms -exec "sh /crio-start.sh" -queues "@HK_Q@" -control "@HK_C@" -hold 1500ms
data crio-isolated sh -c "cat $CG/cpuset.cpus.isolated 2>&1; cat /proc/irq/default_smp_affinity; grep ^IRQBALANCE_BANNED_CPUS= /etc/default/irqbalance"
data crio-metrics sh -c "wget -q -O - $URL/metrics | grep -E '^numairqd_banned_cpus'"
data crio-state guestcheck state
wp crio-stopped crio_pod_stop_to_placed_ms -exec "sh /crio-stop.sh" -queues "@ALL_Q@" -control "@ALL_C@" -hold 1500ms
data crio-metrics-stopped sh -c "wget -q -O - $URL/metrics | grep -E '^numairqd_banned_cpus'"
alive crio-alive
stop_daemon crio-stop
data daemon-log cat "$LOG"
`

// crioBanned are the CPUs the pod's IRQ bans hold; crioHousekeeping its
// first CPU, left to IRQs.
var crioBanned, crioHousekeeping = []int{5, 6, 7}, 4

func TestCrioHousekeeping(t *testing.T) {
	parts := hasPartitions(kernelVersion(requireEnv(t).kernel))
	g := FourNodeGuest()
	all := allCPUs(g.NumCPUs())
	pAll, pHK := g.NetPlacement(0, all), g.NetPlacement(0, without(all, crioBanned...))
	if !slices.Contains(pHK.Queues, crioHousekeeping) {
		t.Fatalf("the plan puts no queue on housekeeping CPU %d: %v", crioHousekeeping, pHK.Queues)
	}
	script := strings.NewReplacer(
		"@ALL_Q@", pAll.QueueArg(), "@ALL_C@", pAll.ControlList(),
		"@HK_Q@", pHK.QueueArg(), "@HK_C@", pHK.ControlList(), "@PARTS@", map[bool]string{true: "1", false: "0"}[parts],
	).Replace(crioScript)
	banned := cpumask.New(crioBanned...)
	partWant := 0
	if parts {
		partWant = len(crioBanned)
	}
	Run(t, Scenario{
		Name:   "crio",
		Guest:  g,
		Script: daemonScript(g.NetAddress(0), script),
		Files: map[string][]byte{
			"/etc/numairqd/numairqd.yaml": []byte("listen: \"127.0.0.1:9768\"\n"),
			"/etc/default/irqbalance":     []byte(crioDebianEnv),
			"/crio-start.sh":              []byte(crioStart),
			"/crio-stop.sh":               []byte(crioStop),
		},
		Timeout: 180 * time.Second,
		Expect:  []string{"crio-before", "crio-placed", "crio-started", "crio-stopped", "crio-alive", "crio-stop"},
		Verify: func(t *testing.T, r *Result) {
			d, _ := r.Data("crio-isolated")
			t.Logf("after the start: cpuset.cpus.isolated, default_smp_affinity, env line:\n%s", d.Output)
			if parts {
				r.Check("crio-partition", strings.HasPrefix(string(d.Output), "4-7\n"), "cpuset.cpus.isolated: %q, want the whole pod 4-7", d.Output)
			}
			m, ok := r.Data("crio-metrics")
			out := string(m.Output)
			for src, n := range map[string]int{"irqbalance_env": 3, "default_smp_affinity": 3, "isolated_partitions": partWant} {
				r.Check("crio-banned-"+src, ok && strings.Contains(out, fmt.Sprintf(`numairqd_banned_cpus{source=%q} %d`, src, n)),
					"want %d CPUs banned by %s: %s", n, src, strings.TrimSpace(out))
			}
			m, ok = r.Data("crio-metrics-stopped")
			r.Check("crio-banned-cleared", ok && regexp.MustCompile(`(?m)^numairqd_banned_cpus\{[^}]*\} [1-9]`).FindString(string(m.Output)) == "",
				"after the stop: %s", strings.TrimSpace(string(m.Output)))
			if parts {
				log, _ := r.Data("daemon-log")
				r.Check("crio-housekeeping-logged", strings.Contains(string(log.Output), `"crio_housekeeping":"4"`),
					"the bans log line names housekeeping CPU 4")
			}
			if s, ok := state(t, r, "crio-state"); ok {
				irqs := movableDeviceIRQs(s)
				var on []string
				onHK := 0
				for _, q := range irqs {
					c, err := cpumask.ParseList(q.Affinity)
					if err != nil || c.Intersects(banned) {
						on = append(on, fmt.Sprintf("irq %d %v on %s", q.Number, q.Actions, q.Affinity))
					}
					if c.Contains(crioHousekeeping) {
						onHK++
					}
				}
				r.Check("crio-none-on-banned", len(irqs) > 0 && len(on) == 0, "%d movable device IRQs; on banned CPUs %s: %v", len(irqs), banned, on)
				r.Check("crio-housekeeping-used", onHK > 0, "%d device IRQs on housekeeping CPU %d", onHK, crioHousekeeping)
			}
			if t.Failed() {
				dumpDaemonLog(t, r)
			}
		},
	})
}
