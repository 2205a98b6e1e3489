//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The rounds scenario counts what one CPU going offline costs the
// daemon: once it is idle (its rounds counter unchanged for
// roundsQuiet), CPU hotplugCPU goes offline; when the placement without
// it is in place and the counter has again been unchanged for
// roundsQuiet (longer than the verify delay and the coalescing window),
// the difference of numairqd_rounds_total, by trigger, is the event's
// cost.
const roundsScript = `
ip link set lo up
# rounds: the daemon's round counters, one line per trigger.
rounds() { wget -q -O - "$URL/metrics" | grep '^numairqd_rounds_total'; }
# idle: until the counters have not changed for @QUIET@ s.
idle() {
	_a=$(rounds)
	while sleep @QUIET@; _b=$(rounds); [ "$_a" != "$_b" ]; do _a=$_b; done
}
start_daemon --config "$CFG"
wp r-placed r_placed_ms -since "$T0" -queues "@ALL_Q@" -control "@ALL_C@" -hold 500ms
idle
data r-before rounds
wp r-offline r_offline_ms -write /sys/devices/system/cpu/cpu@CPU@/online=0 -queues "@OFF_Q@" -control "@OFF_C@" -hold 300ms
idle
data r-after rounds
alive r-alive
stop_daemon r-stop
data daemon-log cat "$LOG"
`

const (
	// roundsQuiet is the idle time, in seconds: more than the verify
	// delay (2 s) and the coalescing window's max delay (0.5 s).
	roundsQuiet = 4
	// maxRoundsPerOffline is what one CPU going offline may cost: the
	// event's round, one re-plan and the verify round, with room.
	maxRoundsPerOffline = 4
)

func TestRoundsPerCPUOffline(t *testing.T) {
	g := FourNodeGuest()
	all := allCPUs(g.NumCPUs())
	pAll, pOff := g.NetPlacement(0, all), g.NetPlacement(0, without(all, hotplugCPU))
	script := strings.NewReplacer(
		"@ALL_Q@", pAll.QueueArg(), "@ALL_C@", pAll.ControlList(),
		"@OFF_Q@", pOff.QueueArg(), "@OFF_C@", pOff.ControlList(),
		"@CPU@", strconv.Itoa(hotplugCPU), "@QUIET@", strconv.Itoa(roundsQuiet),
	).Replace(roundsScript)
	Run(t, Scenario{
		Name:    "rounds",
		Guest:   g,
		Script:  daemonScript(g.NetAddress(0), script),
		Files:   map[string][]byte{"/etc/numairqd/numairqd.yaml": []byte("listen: \"127.0.0.1:9768\"\n")},
		Timeout: 180 * time.Second,
		Expect:  []string{"r-placed", "r-offline", "r-alive", "r-stop"},
		Verify: func(t *testing.T, r *Result) {
			before, ok1 := r.Data("r-before")
			after, ok2 := r.Data("r-after")
			if !ok1 || !ok2 {
				t.Fatalf("round counters missing: before %v, after %v", ok1, ok2)
			}
			total, labels := roundsDelta(string(before.Output), string(after.Output))
			t.Logf("one CPU offline cost %d rounds: %s", total, strings.Join(labels, " "))
			r.Metric("rounds_per_cpu_offline", total)
			if total < 1 || total > maxRoundsPerOffline {
				t.Errorf("one CPU offline cost %d rounds (%s), want 1 to %d", total, strings.Join(labels, " "), maxRoundsPerOffline)
				dumpDaemonLog(t, r)
			}
		},
	})
}

// roundsDelta is the rounds counted between two scrapes of
// numairqd_rounds_total: the total and "trigger=n" for each trigger that
// ran.
func roundsDelta(before, after string) (int, []string) {
	was := map[string]float64{}
	for _, s := range promFind(parseProm(before), "numairqd_rounds_total", nil) {
		was[s.Labels["trigger"]] = s.Value
	}
	total, labels := 0, []string{}
	for _, s := range promFind(parseProm(after), "numairqd_rounds_total", nil) {
		if n := int(s.Value - was[s.Labels["trigger"]]); n > 0 {
			total += n
			labels = append(labels, fmt.Sprintf("%s=%d", s.Labels["trigger"], n))
		}
	}
	slices.Sort(labels)
	return total, labels
}
