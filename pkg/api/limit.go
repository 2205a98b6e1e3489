package api

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// limit runs a handler for at most inFlight requests at once; others wait
// up to wait, then get 503 with Retry-After.
type limit struct {
	inFlight int
	wait     time.Duration
}

// The bounds of /metrics, and of /plan and /status each.
var (
	defaultMetricsLimit = limit{inFlight: 16, wait: 5 * time.Second}
	defaultPlanLimit    = limit{inFlight: 4, wait: 5 * time.Second}
)

// wrap returns h behind the limit, with its own slots.
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
