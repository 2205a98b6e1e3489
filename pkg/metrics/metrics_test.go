package metrics

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
	"github.com/numairqd/numairqd/pkg/watch"
)

// round is a published round that took took, with the given outcomes.
func round(trigger string, took time.Duration, byKind map[apply.Kind]int) *state.State {
	return &state.State{Machine: machine.Machine{Took: took}, Trigger: trigger, Finished: roundAt,
		Apply: apply.Result{ByKind: byKind}}
}

func TestInstruments(t *testing.T) {
	m := New(&state.Store{}, Options{})
	m.RoundDone(round("startup", 300*time.Microsecond, map[apply.Kind]int{apply.KindOK: 2}), time.Time{})
	m.RoundDone(round("uevent", 2*time.Millisecond, map[apply.Kind]int{apply.KindNoSpace: 1}), roundAt.Add(-40*time.Millisecond))
	m.RoundFailed("uevent", 3*time.Second, &machine.ReadError{Source: "inventory", Err: errors.New("read /proc/interrupts: EIO")})
	m.RoundFailed("resync", time.Millisecond, fmt.Errorf("round: %w", &machine.ReadError{Source: "inventory", Err: errors.New("gone")}))
	m.ConfigReload(true, time.Unix(1700000000, 0))
	m.ConfigReload(false, time.Unix(1700000100, 0))
	m.Watch(func() watch.Stats {
		return watch.Stats{
			Uevents:   map[watch.UeventKind]uint64{{Subsystem: "cpu", Action: "online"}: 2, {Subsystem: "pci", Action: "add"}: 1},
			Dropped:   map[string]uint64{"not_kernel": 1},
			Overflows: map[string]uint64{"uevent": 1},
		}
	})

	const want = `# HELP numairqd_affinity_writes_total Writes of /proc/irq/N/smp_affinity_list, by result.
# TYPE numairqd_affinity_writes_total counter
numairqd_affinity_writes_total{result="busy"} 0
numairqd_affinity_writes_total{result="dry_run"} 0
numairqd_affinity_writes_total{result="error"} 0
numairqd_affinity_writes_total{result="managed"} 0
numairqd_affinity_writes_total{result="no_space"} 1
numairqd_affinity_writes_total{result="ok"} 2
numairqd_affinity_writes_total{result="stale"} 0
numairqd_affinity_writes_total{result="vanished"} 0
# HELP numairqd_config_last_reload_success Whether the last configuration reload succeeded (1) or not (0).
# TYPE numairqd_config_last_reload_success gauge
numairqd_config_last_reload_success 0
# HELP numairqd_config_last_reload_success_timestamp_seconds When the configuration was last loaded successfully.
# TYPE numairqd_config_last_reload_success_timestamp_seconds gauge
numairqd_config_last_reload_success_timestamp_seconds 1.7e+09
# HELP numairqd_config_reloads_total Configuration reloads, by result.
# TYPE numairqd_config_reloads_total counter
numairqd_config_reloads_total{result="failure"} 1
numairqd_config_reloads_total{result="success"} 1
# HELP numairqd_errors_total Errors, by where they happened.
# TYPE numairqd_errors_total counter
numairqd_errors_total{kind="bans"} 0
numairqd_errors_total{kind="config"} 1
numairqd_errors_total{kind="http"} 0
numairqd_errors_total{kind="load"} 0
numairqd_errors_total{kind="read_inventory"} 2
numairqd_errors_total{kind="read_topology"} 0
numairqd_errors_total{kind="watch"} 0
# HELP numairqd_event_to_applied_seconds Time from the first event of a coalesced burst to the end of the apply it caused.
# TYPE numairqd_event_to_applied_seconds histogram
numairqd_event_to_applied_seconds_bucket{le="0.001"} 0
numairqd_event_to_applied_seconds_bucket{le="0.0025"} 0
numairqd_event_to_applied_seconds_bucket{le="0.005"} 0
numairqd_event_to_applied_seconds_bucket{le="0.01"} 0
numairqd_event_to_applied_seconds_bucket{le="0.025"} 0
numairqd_event_to_applied_seconds_bucket{le="0.05"} 1
numairqd_event_to_applied_seconds_bucket{le="0.1"} 1
numairqd_event_to_applied_seconds_bucket{le="0.25"} 1
numairqd_event_to_applied_seconds_bucket{le="0.5"} 1
numairqd_event_to_applied_seconds_bucket{le="1"} 1
numairqd_event_to_applied_seconds_bucket{le="2.5"} 1
numairqd_event_to_applied_seconds_bucket{le="5"} 1
numairqd_event_to_applied_seconds_bucket{le="10"} 1
numairqd_event_to_applied_seconds_bucket{le="+Inf"} 1
numairqd_event_to_applied_seconds_sum 0.04
numairqd_event_to_applied_seconds_count 1
# HELP numairqd_netlink_overflows_total Netlink receive buffer overflows (ENOBUFS), each forcing a full rescan, by socket (uevent, rtnetlink, ethtool, netdev).
# TYPE numairqd_netlink_overflows_total counter
numairqd_netlink_overflows_total{socket="ethtool"} 0
numairqd_netlink_overflows_total{socket="netdev"} 0
numairqd_netlink_overflows_total{socket="rtnetlink"} 0
numairqd_netlink_overflows_total{socket="uevent"} 1
# HELP numairqd_round_failures_total Reconcile rounds that failed before applying anything.
# TYPE numairqd_round_failures_total counter
numairqd_round_failures_total 2
# HELP numairqd_rounds_total Reconcile rounds run, failed or not, by what triggered them.
# TYPE numairqd_rounds_total counter
numairqd_rounds_total{trigger="bans"} 0
numairqd_rounds_total{trigger="channels"} 0
numairqd_rounds_total{trigger="config"} 0
numairqd_rounds_total{trigger="link"} 0
numairqd_rounds_total{trigger="load"} 0
numairqd_rounds_total{trigger="netdev"} 0
numairqd_rounds_total{trigger="verify"} 0
numairqd_rounds_total{trigger="overflow"} 0
numairqd_rounds_total{trigger="resync"} 1
numairqd_rounds_total{trigger="sighup"} 0
numairqd_rounds_total{trigger="stale"} 0
numairqd_rounds_total{trigger="startup"} 1
numairqd_rounds_total{trigger="uevent"} 2
# HELP numairqd_uevents_dropped_total Netlink messages discarded: not_kernel (sent by a process) or malformed.
# TYPE numairqd_uevents_dropped_total counter
numairqd_uevents_dropped_total{reason="malformed"} 0
numairqd_uevents_dropped_total{reason="not_kernel"} 1
# HELP numairqd_uevents_total Interesting kernel uevents received, by subsystem and action.
# TYPE numairqd_uevents_total counter
numairqd_uevents_total{action="add",subsystem="pci"} 1
numairqd_uevents_total{action="online",subsystem="cpu"} 2
`
	names := []string{"numairqd_affinity_writes_total", "numairqd_config_last_reload_success",
		"numairqd_config_last_reload_success_timestamp_seconds", "numairqd_config_reloads_total", "numairqd_errors_total",
		"numairqd_event_to_applied_seconds", "numairqd_netlink_overflows_total", "numairqd_round_failures_total",
		"numairqd_rounds_total", "numairqd_uevents_dropped_total", "numairqd_uevents_total"}
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}

	var h dto.Metric
	if err := m.roundDuration.(prometheus.Metric).Write(&h); err != nil {
		t.Fatal(err)
	}
	if got := h.GetHistogram().GetSampleCount(); got != 4 {
		t.Errorf("round_duration_seconds count = %d, want 4", got)
	}
	wantLE := map[float64]uint64{0.0001: 0, 0.0005: 1, 0.001: 2, 0.0025: 3, 2.5: 3, 5: 4, 10: 4}
	for _, b := range h.GetHistogram().GetBucket() {
		if want, ok := wantLE[b.GetUpperBound()]; ok && b.GetCumulativeCount() != want {
			t.Errorf("round_duration_seconds bucket le=%g = %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
}

func TestRegistry(t *testing.T) {
	m := New(testStore(), Options{PerIRQ: true})
	for name, want := range map[string]int{
		"numairqd_build_info":                   1,
		"go_goroutines":                         1,
		"numairqd_rounds_total":                 len(triggers),
		"numairqd_irqs":                         3 * len(States),
		"numairqd_last_round_timestamp_seconds": 1,
	} {
		if got, err := testutil.GatherAndCount(m.Gatherer(), name); err != nil || got != want {
			t.Errorf("%s: %d series (err %v), want %d", name, got, err, want)
		}
	}
	if n, err := testutil.GatherAndCount(m.Gatherer(), "process_start_time_seconds"); err != nil || n != 1 {
		t.Errorf("process collector: %d series (err %v), want 1", n, err)
	}
	problems, err := testutil.GatherAndLint(m.Gatherer())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
}

// TestBalanceMetrics checks the load balancing counters: moves by
// reason, reset from a round's plan, and the objective around a move.
func TestBalanceMetrics(t *testing.T) {
	m := New(&state.Store{}, Options{})
	reset := round("resync", time.Millisecond, nil)
	reset.Plan = &policy.Plan{Balance: &policy.BalanceView{Reset: 3}}
	m.RoundDone(reset, time.Time{})
	m.BalanceMoved(2, 1.6, 1.2)
	const want = `# HELP numairqd_balance_moves_total Queues moved by balance: load, by reason: load (to lower the busiest CPU's load) or reset (back to count's placement, which a topology or queue change made the held one leave).
# TYPE numairqd_balance_moves_total counter
numairqd_balance_moves_total{reason="load"} 2
numairqd_balance_moves_total{reason="reset"} 3
# HELP numairqd_balance_peak_over_mean The busiest CPU's interrupt load over the mean of the allowed CPUs, before and after the last load balancing move.
# TYPE numairqd_balance_peak_over_mean gauge
numairqd_balance_peak_over_mean{when="after"} 1.2
numairqd_balance_peak_over_mean{when="before"} 1.6
`
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want),
		"numairqd_balance_moves_total", "numairqd_balance_peak_over_mean"); err != nil {
		t.Error(err)
	}
}

// TestXPSWrites: XPS writes are counted by result apart from the IRQ
// writes, every result present from the start.
func TestXPSWrites(t *testing.T) {
	m := New(&state.Store{}, Options{})
	st := round("startup", time.Millisecond, map[apply.Kind]int{apply.KindOK: 1})
	st.Apply.XPSByKind = map[apply.Kind]int{apply.KindOK: 4, apply.KindUnsupported: 1}
	m.RoundDone(st, time.Time{})
	const want = `# HELP numairqd_xps_writes_total Writes of /sys/class/net/IF/queues/tx-N/xps_cpus, by result.
# TYPE numairqd_xps_writes_total counter
numairqd_xps_writes_total{result="busy"} 0
numairqd_xps_writes_total{result="dry_run"} 0
numairqd_xps_writes_total{result="error"} 0
numairqd_xps_writes_total{result="ok"} 4
numairqd_xps_writes_total{result="refused"} 0
numairqd_xps_writes_total{result="unsupported"} 1
numairqd_xps_writes_total{result="vanished"} 0
`
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want), "numairqd_xps_writes_total"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(m.affinityWrites.WithLabelValues("ok")); got != 1 {
		t.Errorf("affinity writes ok = %g, want 1 (the XPS writes not among them)", got)
	}
}

// TestNAPIThreadWrites: NAPI thread pins are counted by result apart
// from the IRQ and XPS writes, every result present from the start.
func TestNAPIThreadWrites(t *testing.T) {
	m := New(&state.Store{}, Options{})
	st := round("startup", time.Millisecond, map[apply.Kind]int{apply.KindOK: 1})
	st.Apply.NAPIByKind = map[apply.Kind]int{apply.KindOK: 6, apply.KindVanished: 1, apply.KindRefused: 2}
	m.RoundDone(st, time.Time{})
	const want = `# HELP numairqd_napi_thread_writes_total CPU affinity writes (sched_setaffinity) of threaded NAPI kthreads, by result.
# TYPE numairqd_napi_thread_writes_total counter
numairqd_napi_thread_writes_total{result="dry_run"} 0
numairqd_napi_thread_writes_total{result="error"} 0
numairqd_napi_thread_writes_total{result="ok"} 6
numairqd_napi_thread_writes_total{result="refused"} 2
numairqd_napi_thread_writes_total{result="vanished"} 1
`
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want), "numairqd_napi_thread_writes_total"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(m.affinityWrites.WithLabelValues("ok")); got != 1 {
		t.Errorf("affinity writes ok = %g, want 1 (the NAPI writes not among them)", got)
	}
	if got := testutil.ToFloat64(m.xpsWrites.WithLabelValues("ok")); got != 0 {
		t.Errorf("xps writes ok = %g, want 0", got)
	}
}
