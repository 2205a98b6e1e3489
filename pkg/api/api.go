// Package api is the daemon's HTTP API: /metrics, /healthz, /plan,
// /status and an index page. It is bounded by what it does, not by who
// connects: /plan is encoded once per State, handlers run a fixed number
// of requests at once, and silent connections time out.
package api

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/metrics"
)

const index = `<!DOCTYPE html>
<html><head><title>numairqd</title></head>
<body>
<h1>numairqd</h1>
<p>Keeps every multi-queue device's IRQs on the right CPUs of a NUMA machine.</p>
<ul>
<li><a href="/metrics">/metrics</a>: Prometheus metrics</li>
<li><a href="/plan">/plan</a>: the current plan as JSON</li>
<li><a href="/status">/status</a>: the last round, bans by source and failed IRQs as JSON (numairqd status)</li>
<li><a href="/healthz">/healthz</a>: 200 once a round has completed</li>
</ul>
</body></html>
`

// API serves what m holds: its registry, its store's newest State and
// its Health. The zero value is not usable; call New.
type API struct {
	m     *metrics.Metrics
	log   *zap.Logger
	now   func() time.Time
	plans planCache
	// metricsLimit bounds /metrics, planLimit /plan and /status each.
	metricsLimit, planLimit limit
}

// New returns the API of m.
func New(m *metrics.Metrics) *API {
	return &API{m: m, log: m.Log(), now: time.Now, metricsLimit: defaultMetricsLimit, planLimit: defaultPlanLimit}
}

// Handler serves /metrics, /healthz, /plan, /status and the index at /,
// GET and HEAD only; each call has its own limits.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.metricsHandler())
	mux.HandleFunc("GET /healthz", a.healthz)
	mux.Handle("GET /plan", a.planLimit.wrap(http.HandlerFunc(a.plan)))
	mux.Handle("GET /status", a.planLimit.wrap(http.HandlerFunc(a.status))) // its own 4 slots: encoded per request
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(index))
	})
	return mux
}

// metricsHandler is promhttp's handler behind a.metricsLimit, inside
// promhttp's instrumentation, which so counts refusals and queued ones.
func (a *API) metricsHandler() http.Handler {
	reg := a.m.Registry()
	return promhttp.InstrumentMetricHandler(reg, a.metricsLimit.wrap(promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      zap.NewStdLog(a.log.Named("promhttp")),
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      reg,
		// A few KiB over loopback; gzip would add about 1.8 MiB of RSS.
		DisableCompression: true,
	})))
}

// plan is 503 until a round has completed, then the newest State's plan
// as `numairqd plan --format json` prints it; a format but json is 400.
func (a *API) plan(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if f := r.URL.Query().Get("format"); f != "" && f != "json" {
		http.Error(w, fmt.Sprintf("unknown format %.64q: /plan serves format=json", f), http.StatusBadRequest)
		return
	}
	st := a.m.Store().Load()
	if st == nil {
		http.Error(w, "no plan yet", http.StatusServiceUnavailable)
		return
	}
	b, err := a.plans.body(st)
	if err != nil {
		a.log.Error("cannot encode the plan", zap.Error(err))
		http.Error(w, "cannot encode the plan", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// healthz is 503 with the reason while the metrics' Health is not nil,
// else 200 with the last round's age.
func (a *API) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	now := a.now()
	if err := a.m.Health(now); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	fin := a.m.Store().Load().Finished
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "ok\nlast round %s ago (%s)\n", now.Sub(fin).Round(time.Millisecond), fin.UTC().Format(time.RFC3339))
}
