package metrics

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/state"
	"github.com/numairqd/numairqd/pkg/watch"
)

const namespace = "numairqd"

// ErrorKind is where an error happened: numairqd_errors_total's kind.
type ErrorKind string

// The error kinds; errorKinds lists them all.
const (
	ErrReadTopology  ErrorKind = "read_topology"  // sysfs CPU/node topology could not be read
	ErrReadInventory ErrorKind = "read_inventory" // /proc/interrupts, /proc/irq or PCI sysfs could not be read
	ErrConfig        ErrorKind = "config"         // a config reload was rejected
	ErrWatch         ErrorKind = "watch"          // an event source could not be opened or failed
	ErrHTTP          ErrorKind = "http"           // the HTTP server could not listen or serve
	ErrLoad          ErrorKind = "load"           // /proc/stat or /proc/interrupts could not be sampled
	ErrBans          ErrorKind = "bans"           // irqbalance's environment file, default_smp_affinity or cpuset.cpus.isolated could not be read
)

var errorKinds = []ErrorKind{ErrReadTopology, ErrReadInventory, ErrConfig, ErrWatch, ErrHTTP, ErrLoad, ErrBans}

var (
	triggers       = watch.Labels()
	roundBuckets   = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	appliedBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
)

// Options tune New.
type Options struct {
	PerIRQ bool        // one series per planned IRQ (metrics_per_irq)
	Log    *zap.Logger // for the HTTP API's errors; nil discards them
	// StaleAfter is how long after the last round Health reports the
	// loop stuck; 0 never.
	StaleAfter time.Duration
	Build      Build // labels numairqd_build_info
	// BootID is the machine's boot_id, for /status; "" unknown.
	BootID string
}

// failure is the last round that failed: when, and why.
type failure struct {
	at  time.Time
	err string
}

// Metrics holds the daemon's private registry; safe for concurrent use.
type Metrics struct {
	reg        *prometheus.Registry
	store      *state.Store
	perIRQ     atomic.Bool
	log        *zap.Logger
	now        func() time.Time
	staleAfter time.Duration
	failed     atomic.Pointer[failure]
	rejected   atomic.Pointer[failure] // the config rejected since the last good load
	version    string                  // as numairqd_build_info shows it, for /status
	bootID     string

	rounds             *prometheus.CounterVec
	roundDuration      prometheus.Histogram
	roundFailures      prometheus.Counter
	eventToApplied     prometheus.Histogram
	affinityWrites     *prometheus.CounterVec
	xpsWrites          *prometheus.CounterVec
	napiWrites         *prometheus.CounterVec
	errors             *prometheus.CounterVec
	configReloads      *prometheus.CounterVec
	configLastSuccess  prometheus.Gauge
	configLastSuccessT prometheus.Gauge
	balanceMoves       *prometheus.CounterVec
	balanceObjective   *prometheus.GaugeVec
	fightSkips         prometheus.Counter
}

// New builds the registry: Go and process collectors, build info, the
// daemon's instruments, and a collector of store's newest State.
func New(store *state.Store, opts Options) *Metrics {
	log := opts.Log
	if log == nil {
		log = zap.NewNop()
	}
	m := &Metrics{reg: prometheus.NewRegistry(), store: store, log: log, now: time.Now, staleAfter: opts.StaleAfter, version: opts.Build.version(),
		bootID: opts.BootID}
	m.perIRQ.Store(opts.PerIRQ)

	// Known label values start at zero, for rate() and absent().
	counterVec := func(name, help, label string, values ...string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, []string{label})
		for _, s := range values {
			v.WithLabelValues(s)
		}
		return v
	}
	m.rounds = counterVec("rounds_total", "Reconcile rounds run, failed or not, by what triggered them.", "trigger", triggers...)
	m.roundDuration = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: "round_duration_seconds",
		Help: "Time a reconcile round took: read, plan and apply.", Buckets: roundBuckets})
	m.roundFailures = prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "round_failures_total",
		Help: "Reconcile rounds that failed before applying anything."})
	m.eventToApplied = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: "event_to_applied_seconds",
		Help: "Time from the first event of a coalesced burst to the end of the apply it caused.", Buckets: appliedBuckets})
	m.affinityWrites = counterVec("affinity_writes_total", "Writes of /proc/irq/N/smp_affinity_list, by result.", "result")
	for _, k := range apply.Kinds() {
		m.affinityWrites.WithLabelValues(k.String())
	}
	m.xpsWrites = counterVec("xps_writes_total", "Writes of /sys/class/net/IF/queues/tx-N/xps_cpus, by result.", "result")
	for _, k := range apply.XPSKinds() {
		m.xpsWrites.WithLabelValues(k.String())
	}
	m.napiWrites = counterVec("napi_thread_writes_total", "CPU affinity writes (sched_setaffinity) of threaded NAPI kthreads, by result.", "result")
	for _, k := range apply.NAPIKinds() {
		m.napiWrites.WithLabelValues(k.String())
	}
	m.errors = counterVec("errors_total", "Errors, by where they happened.", "kind")
	for _, k := range errorKinds {
		m.errors.WithLabelValues(string(k))
	}
	m.configReloads = counterVec("config_reloads_total", "Configuration reloads, by result.", "result", "success", "failure")
	m.configLastSuccess = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "config_last_reload_success",
		Help: "Whether the last configuration reload succeeded (1) or not (0)."})
	m.configLastSuccessT = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "config_last_reload_success_timestamp_seconds",
		Help: "When the configuration was last loaded successfully."})
	m.balanceMoves = counterVec("balance_moves_total", "Queues moved by balance: load, by reason: load (to lower the busiest CPU's load) "+
		"or reset (back to count's placement, which a topology or queue change made the held one leave).", "reason", "load", "reset")
	m.balanceObjective = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "balance_peak_over_mean",
		Help: "The busiest CPU's interrupt load over the mean of the allowed CPUs, before and after the last load balancing move."}, []string{"when"})

	m.fightSkips = prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "fight_writes_skipped_total",
		Help: "IRQ affinity writes skipped while another writer keeps moving the IRQ (numairqd backs off)."})

	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildInfo(opts.Build),
		m.rounds, m.roundDuration, m.roundFailures, m.eventToApplied,
		m.affinityWrites, m.xpsWrites, m.napiWrites, m.errors, m.configReloads, m.configLastSuccess, m.configLastSuccessT,
		m.balanceMoves, m.balanceObjective, m.fightSkips,
		stateCollector{m},
	)
	return m
}

// Registry is the registry /metrics serves.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Store is the store of published States the collectors read.
func (m *Metrics) Store() *state.Store { return m.store }

// Log is Options.Log, never nil.
func (m *Metrics) Log() *zap.Logger { return m.log }

// Version is the release numairqd_build_info shows.
func (m *Metrics) Version() string { return m.version }

// BootID is Options.BootID.
func (m *Metrics) BootID() string { return m.bootID }

// Rejected is the config file rejected since the last successful load:
// when and why; ok is false when there is none.
func (m *Metrics) Rejected() (at time.Time, why string, ok bool) {
	if f := m.rejected.Load(); f != nil {
		return f.at, f.err, true
	}
	return time.Time{}, "", false
}

// Health is nil once a round has completed, unless the last one failed
// or none completed within StaleAfter; the error says which, as of now.
func (m *Metrics) Health(now time.Time) error {
	st := m.store.Load()
	if st == nil {
		return errors.New("not ready: no round has completed yet")
	}
	age := now.Sub(st.Finished).Round(time.Millisecond)
	if f := m.failed.Load(); f != nil && f.at.After(st.Finished) {
		return fmt.Errorf("unhealthy: the last round failed %s ago: %s (last good round %s ago)",
			now.Sub(f.at).Round(time.Millisecond), firstLine(f.err), age)
	}
	if m.staleAfter > 0 && age > m.staleAfter {
		return fmt.Errorf("unhealthy: no round completed for %s (limit %s, twice resync_interval)", age, m.staleAfter)
	}
	return nil
}

// firstLine is s up to its first newline, at most 200 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// SetPerIRQ switches the per-IRQ series on or off (metrics_per_irq).
func (m *Metrics) SetPerIRQ(on bool) { m.perIRQ.Store(on) }

// Watch adds the watcher's counters, read at every scrape; call it once.
func (m *Metrics) Watch(stats func() watch.Stats) { m.reg.MustRegister(watchCollector{stats}) }

// RoundDone counts a round that published st, caused by an event at first.
func (m *Metrics) RoundDone(st *state.State, first time.Time) {
	m.rounds.WithLabelValues(st.Trigger).Inc()
	m.roundDuration.Observe(st.Took().Seconds())
	for kind, n := range st.Apply.ByKind {
		m.affinityWrites.WithLabelValues(kind.String()).Add(float64(n))
	}
	for kind, n := range st.Apply.XPSByKind {
		m.xpsWrites.WithLabelValues(kind.String()).Add(float64(n))
	}
	for kind, n := range st.Apply.NAPIByKind {
		m.napiWrites.WithLabelValues(kind.String()).Add(float64(n))
	}
	m.fightSkips.Add(float64(st.Apply.BackedOff))
	if !first.IsZero() {
		m.eventToApplied.Observe(st.Finished.Sub(first).Seconds())
	}
	if st.Plan != nil && st.Plan.Balance != nil && st.Plan.Balance.Reset > 0 {
		m.balanceMoves.WithLabelValues("reset").Add(float64(st.Plan.Balance.Reset))
	}
}

// BalanceMoved counts load moves and the peak over mean before and after.
func (m *Metrics) BalanceMoved(moves int, before, after float64) {
	m.balanceMoves.WithLabelValues("load").Add(float64(moves))
	m.balanceObjective.WithLabelValues("before").Set(before)
	m.balanceObjective.WithLabelValues("after").Set(after)
}

// RoundFailed counts a round that failed before applying, for Health.
func (m *Metrics) RoundFailed(trigger string, took time.Duration, err error) {
	m.failed.Store(&failure{at: m.now(), err: err.Error()})
	m.rounds.WithLabelValues(trigger).Inc()
	m.roundDuration.Observe(took.Seconds())
	m.roundFailures.Inc()
	var re *machine.ReadError
	if errors.As(err, &re) {
		switch re.Source {
		case "topology":
			m.Error(ErrReadTopology)
		case "inventory":
			m.Error(ErrReadInventory)
		}
	}
}

// Error counts an error of the given kind.
func (m *Metrics) Error(kind ErrorKind) { m.errors.WithLabelValues(string(kind)).Inc() }

// ConfigRejected records a config that failed to load, for Rejected
// and as ConfigReload(false, at) does.
func (m *Metrics) ConfigRejected(err error, at time.Time) {
	m.rejected.Store(&failure{at: at, err: err.Error()})
	m.ConfigReload(false, at)
}

// ConfigReload records a configuration load, the initial one too; a
// successful one clears Rejected.
func (m *Metrics) ConfigReload(ok bool, at time.Time) {
	if !ok {
		m.configReloads.WithLabelValues("failure").Inc()
		m.configLastSuccess.Set(0)
		m.Error(ErrConfig)
		return
	}
	m.rejected.Store(nil)
	m.configReloads.WithLabelValues("success").Inc()
	m.configLastSuccess.Set(1)
	m.configLastSuccessT.Set(unixSeconds(at))
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
