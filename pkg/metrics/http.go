package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
)

const landing = `<!DOCTYPE html>
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

// Handler serves /metrics, /healthz, /plan and a landing page at /.
// Other paths are 404, methods other than GET and HEAD 405. /metrics
// and /plan are behind their limits (limit.go); each call has its own.
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.metricsHandler())
	mux.HandleFunc("GET /healthz", m.healthz)
	mux.Handle("GET /plan", m.planLimit.wrap(http.HandlerFunc(m.plan)))
	mux.Handle("GET /status", m.planLimit.wrap(http.HandlerFunc(m.status))) // its own 4 slots: encoded per request
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(landing))
	})
	return mux
}

// metricsHandler is promhttp's handler behind m.metricsLimit, inside
// promhttp's own instrumentation: a refusal after the wait counts in
// promhttp_metric_handler_requests_total{code="503"}, and
// promhttp_metric_handler_requests_in_flight includes the queued ones.
func (m *Metrics) metricsHandler() http.Handler {
	return promhttp.InstrumentMetricHandler(m.reg, m.metricsLimit.wrap(promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      zap.NewStdLog(m.log.Named("promhttp")),
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg,
		// A few KiB over loopback; gzip would add about 1.8 MiB of RSS.
		DisableCompression: true,
	})))
}

// planFormats are the values /plan's format parameter accepts.
const planFormats = "json"

// plan is 503 until a round has completed, then the newest State's
// plan as `numairqd plan --format json` prints it, encoded once per
// State (planCache). format=json is the default and the only format; any
// other is 400.
func (m *Metrics) plan(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if f := r.URL.Query().Get("format"); f != "" && f != "json" {
		http.Error(w, fmt.Sprintf("unknown format %.64q: /plan serves format=%s", f, planFormats), http.StatusBadRequest)
		return
	}
	st := m.store.Load()
	if st == nil {
		http.Error(w, "no plan yet", http.StatusServiceUnavailable)
		return
	}
	b, err := m.plans.body(st)
	if err != nil {
		m.log.Error("cannot encode the plan", zap.Error(err))
		http.Error(w, "cannot encode the plan", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// healthz is 503 with the reason before the first round, after a failed
// one, or when none completed within StaleAfter (the loop is stuck);
// else 200 with the last round's age. The process's own liveness is the
// systemd watchdog's job.
func (m *Metrics) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	st, now := m.store.Load(), m.now()
	if st == nil {
		http.Error(w, "not ready: no round has completed yet", http.StatusServiceUnavailable)
		return
	}
	age := now.Sub(st.Finished).Round(time.Millisecond)
	if f := m.failed.Load(); f != nil && f.at.After(st.Finished) {
		http.Error(w, fmt.Sprintf("unhealthy: the last round failed %s ago: %s (last good round %s ago)",
			now.Sub(f.at).Round(time.Millisecond), firstLine(f.err), age), http.StatusServiceUnavailable)
		return
	}
	if m.staleAfter > 0 && age > m.staleAfter {
		http.Error(w, fmt.Sprintf("unhealthy: no round completed for %s (limit %s, twice resync_interval)", age, m.staleAfter),
			http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "ok\nlast round %s ago (%s)\n", age, st.Finished.UTC().Format(time.RFC3339))
}

// firstLine is s up to its first newline, at most 200 bytes: an error
// quoted in a response stays one short line.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// Listen binds addr for Serve, before the first round: an address the
// daemon cannot have stops it at start, not later without metrics.
func Listen(ctx context.Context, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(context.WithoutCancel(ctx), "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("http: cannot listen on %q: %w", addr, err)
	}
	return ln, nil
}

// Serve serves h on ln until ctx is cancelled, then shuts down
// gracefully (5s for open requests), closes ln and returns nil; or
// returns the server's error if serving fails. At most maxConns
// connections are open at once.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, log *zap.Logger) error {
	ln = limitConns(ln, maxConns)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          zap.NewStdLog(log.Named("http")),
	}
	log.Info("serving HTTP", zap.Stringer("addr", ln.Addr()))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		// Serve closed ln itself.
		return fmt.Errorf("http: serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}

	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("HTTP shutdown timed out; closing connections", zap.Error(err))
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http: serve on %s: %w", ln.Addr(), err)
	}
	log.Info("HTTP server stopped", zap.Stringer("addr", ln.Addr()))
	return nil
}
