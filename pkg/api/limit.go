package api

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// limit bounds a handler: at most inFlight requests run it at once, and
// one that finds every slot taken waits up to wait for a slot before it
// is refused with 503 and a Retry-After of wait (whole seconds, at least
// 1). A burst is queued, not refused, as long as it drains within wait;
// what a burst costs is bounded by inFlight, not by the number of
// clients (a waiting request is a parked goroutine).
type limit struct {
	inFlight int
	wait     time.Duration
}

// The bounds of /metrics, and of /plan and /status each. A scrape that
// waits 5s still answers within Prometheus' default 10s timeout; 16
// gathers in flight (a few MiB each at 8,192 IRQs with metrics_per_irq)
// cover an HA pair, federation, an agent and people with curl. /plan
// writes the shared document (planCache); 4 at once keep its writes
// from crowding the loop on a small host, and a burst of 32 drains
// within the wait.
var (
	defaultMetricsLimit = limit{inFlight: 16, wait: 5 * time.Second}
	defaultPlanLimit    = limit{inFlight: 4, wait: 5 * time.Second}
)

// wrap returns h behind the limit: each call has its own slots. A
// client that leaves while queued is answered 503 too (nobody reads
// it), so that promhttp does not count it as served.
func (l limit) wrap(h http.Handler) http.Handler {
	slots := make(chan struct{}, l.inFlight)
	retryAfter := strconv.Itoa(max(1, int((l.wait+time.Second-1)/time.Second)))
	busy := fmt.Sprintf("busy: %d requests in flight and none finished within %s; retry later", l.inFlight, l.wait)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
		default:
			t := time.NewTimer(l.wait)
			select {
			case slots <- struct{}{}:
				t.Stop()
			case <-r.Context().Done():
				t.Stop()
				http.Error(w, "client gone while queued", http.StatusServiceUnavailable)
				return
			case <-t.C:
				w.Header().Set("Retry-After", retryAfter)
				http.Error(w, busy, http.StatusServiceUnavailable)
				return
			}
		}
		defer func() { <-slots }()
		h.ServeHTTP(w, r)
	})
}
