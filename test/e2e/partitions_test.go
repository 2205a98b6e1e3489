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
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// The partitions scenario makes an isolated cgroup v2 partition of the
// CPUs of node 3 while the daemon runs, as cri-o does for a pod
// annotated cpu-load-balancing.crio.io: disable: every device IRQ the
// daemon may move must leave those CPUs (the NVMe's managed queues are
// the kernel's), with no event, reload or restart, and come back when
// the partition goes. How long each took is a figure (p_*_ms).
const partitionsScript = `
ip link set lo up
CG=/sys/fs/cgroup
grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none "$CG"
echo +cpuset >"$CG/cgroup.subtree_control"
data p-root-before cat "$CG/cpuset.cpus.isolated"
start_daemon --config "$CFG"
wp p-placed p_startup_to_placed_ms -since "$T0" -queues "@ALL_Q@" -control "@ALL_C@" -hold 500ms
wp p-isolated p_partition_to_placed_ms -exec "mkdir $CG/p && echo @PART@ >$CG/p/cpuset.cpus && echo isolated >$CG/p/cpuset.cpus.partition" \
	-queues "@PART_Q@" -control "@PART_C@" -hold 500ms
expect_eq p-partition "$(cat $CG/p/cpuset.cpus.partition) $(cat $CG/cpuset.cpus.isolated)" "isolated @PART@"
data p-metrics sh -c "wget -q -O - $URL/metrics | grep -E '^numairqd_(banned_cpus|rounds_total)'"
data p-state guestcheck state
wp p-removed p_removed_to_placed_ms -exec "rmdir $CG/p" -queues "@ALL_Q@" -control "@ALL_C@" -hold 500ms
data p-metrics-removed sh -c "wget -q -O - $URL/metrics | grep -E '^numairqd_banned_cpus'"
alive p-alive
stop_daemon p-stop
data daemon-log cat "$LOG"
`

// partitionCPUs are the CPUs of the isolated partition: node 3's, which
// hold queues 2 and 3 in the first plan.
var partitionCPUs = []int{6, 7}

// partitionsSince is the first kernel with cpuset.cpus.isolated.
var partitionsSince = [2]int{6, 8}

// hasPartitions reports whether kernel release v lists isolated
// partitions in cpuset.cpus.isolated.
func hasPartitions(v [2]int) bool {
	return v[0] > partitionsSince[0] || v[0] == partitionsSince[0] && v[1] >= partitionsSince[1]
}

// movableDeviceIRQs returns the PCI devices' MSI IRQs of s that
// userspace may move: not the NVMe's kernel-managed ones.
func movableDeviceIRQs(s guestinfo.State) []guestinfo.IRQ {
	managed := map[int]bool{}
	for _, q := range managedNVMe(s) {
		managed[q.Number] = true
	}
	var out []guestinfo.IRQ
	for _, dev := range s.PCI {
		for _, irq := range dev.MSIIRQs {
			i := slices.IndexFunc(s.IRQs, func(q guestinfo.IRQ) bool { return q.Number == irq })
			if i >= 0 && !managed[irq] {
				out = append(out, s.IRQs[i])
			}
		}
	}
	return out
}

func TestIsolatedPartition(t *testing.T) {
	if v := kernelVersion(requireEnv(t).kernel); !hasPartitions(v) {
		t.Skipf("kernel %d.%d: cgroup v2's cpuset.cpus.isolated is %d.%d's", v[0], v[1], partitionsSince[0], partitionsSince[1])
	}
	g := FourNodeGuest()
	all := allCPUs(g.NumCPUs())
	allowed := without(all, partitionCPUs...)
	pAll, pPart := g.NetPlacement(0, all), g.NetPlacement(0, allowed)
	part := cpumask.New(partitionCPUs...)
	script := strings.NewReplacer(
		"@ALL_Q@", pAll.QueueArg(), "@ALL_C@", pAll.ControlList(),
		"@PART_Q@", pPart.QueueArg(), "@PART_C@", pPart.ControlList(), "@PART@", part.String(),
	).Replace(partitionsScript)
	addr := g.NetAddress(0)
	Run(t, Scenario{
		Name:    "partitions",
		Guest:   g,
		Script:  daemonScript(addr, script),
		Files:   map[string][]byte{"/etc/numairqd/numairqd.yaml": []byte("listen: \"127.0.0.1:9768\"\n")},
		Timeout: 180 * time.Second,
		Expect:  []string{"p-placed", "p-isolated", "p-partition", "p-removed", "p-alive", "p-stop"},
		Verify: func(t *testing.T, r *Result) {
			m, ok := r.Data("p-metrics")
			out := string(m.Output)
			r.Check("p-banned-counted", ok && strings.Contains(out, fmt.Sprintf(`numairqd_banned_cpus{source="isolated_partitions"} %d`, len(partitionCPUs))),
				"numairqd_banned_cpus with the partition: %s", strings.TrimSpace(out))
			r.Check("p-bans-round", ok && regexp.MustCompile(`numairqd_rounds_total\{trigger="bans"\} [1-9]`).MatchString(out),
				"a round triggered by the partition: %s", strings.TrimSpace(out))
			m, ok = r.Data("p-metrics-removed")
			r.Check("p-banned-cleared", ok && strings.Contains(string(m.Output), `numairqd_banned_cpus{source="isolated_partitions"} 0`),
				"numairqd_banned_cpus without it: %s", strings.TrimSpace(string(m.Output)))
			if s, ok := state(t, r, "p-state"); ok {
				irqs := movableDeviceIRQs(s)
				var on []string
				for _, q := range irqs {
					if c, err := cpumask.ParseList(q.Affinity); err != nil || c.Intersects(part) {
						on = append(on, fmt.Sprintf("irq %d %v on %s", q.Number, q.Actions, q.Affinity))
					}
				}
				r.Check("p-none-on-partition", len(irqs) > 0 && len(on) == 0, "%d movable device IRQs; on the partition's CPUs %s: %v", len(irqs), part, on)
			}
			if t.Failed() {
				dumpDaemonLog(t, r)
			}
		},
	})
}
