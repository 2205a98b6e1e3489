package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// burst sends n concurrent GETs of path to srv and returns each answer's
// status and body.
func burst(t *testing.T, srv *httptest.Server, path string, n int) (codes []int, bodies [][]byte) {
	t.Helper()
	codes, bodies = make([]int, n), make([][]byte, n)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxConnsPerHost: n, MaxIdleConnsPerHost: n}}
	defer client.CloseIdleConnections()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			resp, err := client.Get(srv.URL + path)
			if err != nil {
				t.Errorf("GET %s: %v", path, err)
				return
			}
			defer resp.Body.Close()
			codes[i] = resp.StatusCode
			bodies[i], err = io.ReadAll(resp.Body)
			if err != nil {
				t.Errorf("GET %s: reading the body: %v", path, err)
			}
		})
	}
	close(start)
	wg.Wait()
	return codes, bodies
}

// TestMetricsBurst: 50 concurrent scrapers all get 200, which
// promhttp's own counter records.
func TestMetricsBurst(t *testing.T) {
	a := newAPI(testStore(t))
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	codes, bodies := burst(t, srv, "/metrics", 50)
	for i, c := range codes {
		if c != http.StatusOK || !bytes.Contains(bodies[i], []byte("numairqd_irqs{")) {
			t.Errorf("scrape %d: %d %.200q, want 200 with the state series", i, c, bodies[i])
		}
	}
	if got := testCounter(t, a, `promhttp_metric_handler_requests_total`, `code="200"`); got != 50 {
		t.Errorf(`promhttp_metric_handler_requests_total{code="200"} = %v, want 50`, got)
	}
}

// testCounter is the value of the series of name with label, read from
// a scrape of a's /metrics.
func testCounter(t *testing.T, a *API, name, label string) float64 {
	t.Helper()
	rec := get(t, a.Handler(), "/metrics")
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		var v float64
		if strings.HasPrefix(line, name+"{"+label+"} ") {
			if _, err := fmt.Sscan(strings.TrimPrefix(line, name+"{"+label+"} "), &v); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	t.Fatalf("no %s{%s} in the scrape", name, label)
	return 0
}

// TestPlanBurst: 32 concurrent /plan clients all get the same
// document, byte for byte what the plan command prints, encoded once;
// after a Publish the next burst gets the new State, encoded once more.
func TestPlanBurst(t *testing.T) {
	store := testStore(t)
	a := newAPI(store)
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	for round := uint64(1); round <= 2; round++ {
		want, err := json.MarshalIndent(store.Load().Doc(), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, '\n')
		codes, bodies := burst(t, srv, "/plan", 32)
		for i, c := range codes {
			if c != http.StatusOK || !bytes.Equal(bodies[i], want) {
				t.Errorf("generation %d, client %d: %d, body equal to MarshalIndent's: %v", round, i, c, bytes.Equal(bodies[i], want))
			}
		}
		var doc struct{ Generation uint64 }
		if err := json.Unmarshal(bodies[0], &doc); err != nil || doc.Generation != round {
			t.Errorf("generation %d: served generation %d (%v)", round, doc.Generation, err)
		}
		a.plans.mu.Lock()
		got := a.plans.builds
		a.plans.mu.Unlock()
		if got != int(round) {
			t.Errorf("after %d states: %d encodings, want one per state", round, got)
		}
		republish(store)
	}
}

func TestPlanFormat(t *testing.T) {
	h := newAPI(testStore(t)).Handler()
	for _, path := range []string{"/plan", "/plan?format=json"} {
		if rec := get(t, h, path); rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %q, want 200 JSON", path, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
	for _, path := range []string{"/plan?format=text", "/plan?format=" + strings.Repeat("x", 500)} {
		rec := get(t, h, path)
		if body := rec.Body.String(); rec.Code != http.StatusBadRequest || !strings.Contains(body, "/plan serves format=json") || len(body) > 200 {
			t.Errorf("%s: %d %q, want 400 naming format=json in a short line", path[:min(len(path), 40)], rec.Code, body)
		}
	}
}

// blockedWriter is a client that does not read: its first Write
// signals writing and waits for release.
type blockedWriter struct {
	*httptest.ResponseRecorder
	writing, release chan struct{}
	once             sync.Once
}

func (w *blockedWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.writing); <-w.release })
	return w.ResponseRecorder.Write(b)
}

// hold starts a GET of path on h that takes a slot and keeps it until
// the returned func is called; that func waits for the request to end.
func hold(t *testing.T, h http.Handler, path string) (release func()) {
	t.Helper()
	w := &blockedWriter{ResponseRecorder: httptest.NewRecorder(), writing: make(chan struct{}), release: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	}()
	select {
	case <-w.writing:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not start writing", path)
	}
	return func() {
		close(w.release)
		<-done
		if w.Code != http.StatusOK {
			t.Errorf("the held %s: %d", path, w.Code)
		}
	}
}

// TestLimitRefuses: with every slot held past the wait, a request is
// 503 with Retry-After; promhttp counts the refusal; once the slot is
// free the next request is served.
func TestLimitRefuses(t *testing.T) {
	for _, path := range []string{"/plan", "/metrics"} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			a := newAPI(testStore(t))
			a.planLimit = limit{inFlight: 1, wait: 20 * time.Millisecond}
			a.metricsLimit = a.planLimit
			h := a.Handler()
			release := hold(t, h, path)
			rec := get(t, h, path)
			if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" ||
				!strings.Contains(rec.Body.String(), "busy: 1 requests in flight and none finished within 20ms") {
				t.Errorf("with the slot held: %d Retry-After %q %q, want 503, 1 and the reason", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
			}
			release()
			if rec := get(t, h, path); rec.Code != http.StatusOK {
				t.Errorf("after the release: %d, want 200", rec.Code)
			}
			if path == "/metrics" {
				if got := testCounter(t, a, `promhttp_metric_handler_requests_total`, `code="503"`); got != 1 {
					t.Errorf(`promhttp_metric_handler_requests_total{code="503"} = %v, want 1`, got)
				}
			}
		})
	}
}

// TestLimitQueues: a request that finds the slot held waits for it
// and is served once the holder finishes within the wait.
func TestLimitQueues(t *testing.T) {
	a := newAPI(testStore(t))
	a.planLimit = limit{inFlight: 1, wait: time.Minute}
	h := a.Handler()
	release := hold(t, h, "/plan")
	got := make(chan int, 1)
	go func() { got <- get(t, h, "/plan").Code }()
	select {
	case c := <-got:
		t.Fatalf("a request with the slot held answered %d at once, want it queued", c)
	case <-time.After(50 * time.Millisecond):
	}
	// A client that leaves while queued gives up its place.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/plan", nil).WithContext(ctx))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "client gone while queued") {
		t.Errorf("a cancelled queued request: %d %q, want 503 client gone", rec.Code, rec.Body)
	}
	release()
	select {
	case c := <-got:
		if c != http.StatusOK {
			t.Errorf("the queued request: %d, want 200", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the queued request was not served after the release")
	}
}
