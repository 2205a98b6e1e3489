package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"go.uber.org/zap"
)

const namespace = "numairqd"

// Label values known in advance. Their series are created at zero by New
// so that rate() and absent() work before the first event; other values
// are accepted too.
var (
	triggers       = []string{"startup", "uevent", "link", "resync", "sighup", "config", "overflow", "stale"}
	writeResults   = []string{"ok", "dry_run", "managed", "no_space", "stale", "busy", "vanished", "error"}
	errorKinds     = []string{"read_topology", "read_inventory", "apply", "config", "watch"}
	reloadResults  = []string{"success", "failure"}
	roundBuckets   = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	appliedBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
)

// Options tune New.
type Options struct {
	// PerIRQ adds one series per planned IRQ (config metrics_per_irq).
	// SetPerIRQ changes it later.
	PerIRQ bool
	// Log receives errors of the /metrics handler; nil discards them.
	Log *zap.Logger
}

// Metrics holds the daemon's private registry and its instruments. All
// methods are safe for concurrent use.
type Metrics struct {
	reg     *prometheus.Registry
	current func() *Status
	perIRQ  atomic.Bool
	log     *zap.Logger
	now     func() time.Time

	rounds             *prometheus.CounterVec
	roundDuration      prometheus.Histogram
	roundFailures      prometheus.Counter
	eventToApplied     prometheus.Histogram
	affinityWrites     *prometheus.CounterVec
	errors             *prometheus.CounterVec
	uevents            *prometheus.CounterVec
	ueventsDropped     *prometheus.CounterVec
	netlinkOverflows   *prometheus.CounterVec
	configReloads      *prometheus.CounterVec
	configLastSuccess  prometheus.Gauge
	configLastSuccessT prometheus.Gauge
	topologyGeneration prometheus.Gauge
}

// New builds the registry: Go and process collectors, numairqd_build_info,
// the daemon's instruments, and a collector that calls current at every
// scrape. current may return nil before the first round.
func New(current func() *Status, opts Options) *Metrics {
	log := opts.Log
	if log == nil {
		log = zap.NewNop()
	}
	m := &Metrics{reg: prometheus.NewRegistry(), current: current, log: log, now: time.Now}
	m.perIRQ.Store(opts.PerIRQ)

	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, labels)
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help})
	}
	m.rounds = counterVec("rounds_total", "Reconcile rounds run, failed or not, by what triggered them.", "trigger")
	m.roundDuration = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: "round_duration_seconds",
		Help: "Time a reconcile round took: read, plan and apply.", Buckets: roundBuckets})
	m.roundFailures = prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "round_failures_total",
		Help: "Reconcile rounds that failed before applying anything."})
	m.eventToApplied = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: namespace, Name: "event_to_applied_seconds",
		Help: "Time from the first event of a coalesced burst to the end of the apply it caused.", Buckets: appliedBuckets})
	m.affinityWrites = counterVec("affinity_writes_total", "Writes of /proc/irq/N/smp_affinity_list, by result.", "result")
	m.errors = counterVec("errors_total", "Errors, by where they happened.", "kind")
	m.uevents = counterVec("uevents_total", "Kernel uevents received.", "subsystem", "action")
	m.ueventsDropped = counterVec("uevents_dropped_total", "Kernel uevents discarded, by why.", "reason")
	m.netlinkOverflows = counterVec("netlink_overflows_total", "Netlink receive buffer overflows (ENOBUFS), each forcing a full rescan.", "socket")
	m.configReloads = counterVec("config_reloads_total", "Configuration reloads, by result.", "result")
	m.configLastSuccess = gauge("config_last_reload_success", "Whether the last configuration reload succeeded (1) or not (0).")
	m.configLastSuccessT = gauge("config_last_reload_success_timestamp_seconds", "When the configuration was last loaded successfully.")
	m.topologyGeneration = gauge("topology_generation", "Generation of the CPU topology snapshot in use; it changes on every CPU hotplug.")

	for _, v := range triggers {
		m.rounds.WithLabelValues(v)
	}
	for _, v := range writeResults {
		m.affinityWrites.WithLabelValues(v)
	}
	for _, v := range errorKinds {
		m.errors.WithLabelValues(v)
	}
	for _, v := range reloadResults {
		m.configReloads.WithLabelValues(v)
	}

	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		versioncollector.NewCollector(namespace),
		m.rounds, m.roundDuration, m.roundFailures, m.eventToApplied,
		m.affinityWrites, m.errors, m.uevents, m.ueventsDropped, m.netlinkOverflows,
		m.configReloads, m.configLastSuccess, m.configLastSuccessT, m.topologyGeneration,
		stateCollector{m},
	)
	return m
}

// Gatherer is the private registry, for tests and for serving elsewhere.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// SetPerIRQ switches the per-IRQ series on or off, as a config reload
// of metrics_per_irq says.
func (m *Metrics) SetPerIRQ(on bool) { m.perIRQ.Store(on) }

// Round counts a round, failed or not, by what triggered it ("startup",
// "uevent", "link", "resync", "sighup", "config", "overflow", "stale"),
// and records how long it took.
func (m *Metrics) Round(trigger string, took time.Duration) {
	m.rounds.WithLabelValues(trigger).Inc()
	m.roundDuration.Observe(took.Seconds())
}

// RoundFailed counts a round that errored before applying, in addition
// to Round. Count the cause with Error as well.
func (m *Metrics) RoundFailed() { m.roundFailures.Inc() }

// EventToApplied records the time from the first event of a coalesced
// burst to the end of the apply it caused.
func (m *Metrics) EventToApplied(d time.Duration) { m.eventToApplied.Observe(d.Seconds()) }

// AffinityWrite counts one affinity write by result: ok, dry_run,
// managed, no_space, stale, busy, vanished or error.
func (m *Metrics) AffinityWrite(result string) { m.affinityWrites.WithLabelValues(result).Inc() }

// Error counts an error by kind: read_topology, read_inventory, apply,
// config, watch, ... Keep kinds a small fixed set.
func (m *Metrics) Error(kind string) { m.errors.WithLabelValues(kind).Inc() }

// Uevent counts a kernel uevent received.
func (m *Metrics) Uevent(subsystem, action string) {
	m.uevents.WithLabelValues(subsystem, action).Inc()
}

// UeventDropped counts a uevent discarded, by reason (for example
// "truncated", "malformed", "sender").
func (m *Metrics) UeventDropped(reason string) { m.ueventsDropped.WithLabelValues(reason).Inc() }

// NetlinkOverflow counts an ENOBUFS on the named netlink socket
// ("uevent", "route").
func (m *Metrics) NetlinkOverflow(socket string) { m.netlinkOverflows.WithLabelValues(socket).Inc() }

// ConfigReload records a configuration load finished at the given time.
// Call it for the initial load too, so the gauges start right.
func (m *Metrics) ConfigReload(ok bool, at time.Time) {
	if !ok {
		m.configReloads.WithLabelValues("failure").Inc()
		m.configLastSuccess.Set(0)
		return
	}
	m.configReloads.WithLabelValues("success").Inc()
	m.configLastSuccess.Set(1)
	m.configLastSuccessT.Set(unixSeconds(at))
}

// SetTopologyGeneration publishes the generation of the topology
// snapshot in use.
func (m *Metrics) SetTopologyGeneration(gen uint64) { m.topologyGeneration.Set(float64(gen)) }

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
