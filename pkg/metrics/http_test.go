package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
)

func get(t *testing.T, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

func TestHandler(t *testing.T) {
	var store state.Store
	m := New(&store, Options{})
	m.now = func() time.Time { return roundAt.Add(2500 * time.Millisecond) }
	h := m.Handler()

	// Before the first round.
	if rec := get(t, h, "/healthz"); rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "not ready") {
		t.Errorf("/healthz before a round: %d %q, want 503 not ready", rec.Code, rec.Body)
	}
	if rec := get(t, h, "/plan"); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/plan before a round: %d, want 503", rec.Code)
	}
	rec := get(t, h, "/metrics")
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "numairqd_irqs") ||
		!strings.Contains(rec.Body.String(), "numairqd_build_info") {
		t.Errorf("/metrics before a round: %d, want 200 with build_info and no state series:\n%s", rec.Code, rec.Body)
	}

	publish(&store, testPlan(), map[int]apply.Kind{105: apply.KindNoSpace})
	rec = get(t, h, "/healthz")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), "ok\n") || !strings.Contains(rec.Body.String(), "2.5s ago") {
		t.Errorf("/healthz after a round: %d %q, want 200 ok with the age", rec.Code, rec.Body)
	}
	rec = get(t, h, "/plan")
	var doc policy.Doc
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" || json.Unmarshal(rec.Body.Bytes(), &doc) != nil {
		t.Errorf("/plan: %d %q %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	if doc.Generation != 1 || doc.Allowed != "0-15" || len(doc.Devices) != 4 || doc.Devices[0].IRQs[5].Planned != "2" {
		t.Errorf("/plan = %+v, want generation 1 and testPlan", doc)
	}
	rec = get(t, h, "/metrics")
	for _, want := range []string{
		`numairqd_irqs{device="0000:41:00.0",policy="numa-hop",state="placed"} 5`,
		`numairqd_device_mean_numa_distance{device="0000:41:00.0"} 15`,
		`numairqd_rounds_total{trigger="startup"} 0`,
		`promhttp_metric_handler_requests_total{code="200"} 1`,
		"go_goroutines ",
		"process_cpu_seconds_total ",
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if rec := get(t, h, "/"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `href="/metrics"`) {
		t.Errorf("/: %d %q", rec.Code, rec.Body)
	}
	if rec := get(t, h, "/nope"); rec.Code != http.StatusNotFound {
		t.Errorf("/nope: %d, want 404", rec.Code)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/plan", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /plan: %d, want 405", rec.Code)
	}

	// A second handler on the same registry must not panic.
	_ = m.Handler()
}

func TestServe(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	core, logs := observer.New(zap.InfoLevel)
	m := New(testStore(), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	ln, err := Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		done <- Serve(ctx, ln, m.Handler(), zap.New(core))
	}()

	var addr string
	for deadline := time.Now().Add(5 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, e := range logs.FilterMessage("serving HTTP").All() {
			addr = e.ContextMap()["addr"].(string)
		}
	}
	if addr == "" {
		t.Fatal("Serve did not log its address")
	}

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	for _, path := range []string{"/healthz", "/plan", "/metrics"} {
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("GET %s: %d %q", path, resp.StatusCode, body)
		}
	}

	// The client keeps its connection open; shutdown must still finish.
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	client.CloseIdleConnections()
	if _, err := client.Get("http://" + addr + "/healthz"); err == nil {
		t.Error("server still answers after cancel")
	}
	client.CloseIdleConnections()
}

func TestListenBindError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	if _, err := Listen(context.Background(), addr); err == nil || !strings.Contains(err.Error(), addr) || !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("Listen on a taken address: %v, want an EADDRINUSE error naming %s", err, addr)
	}
}

func TestServeCancelledBeforeStart(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ln, err := Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := Serve(ctx, ln, http.NotFoundHandler(), zap.NewNop()); err != nil {
		t.Fatalf("Serve with a cancelled context: %v, want nil", err)
	}
}

// TestHealthz: 503 with the reason before the first round, after a
// failed round and when rounds stopped completing; 200 otherwise.
func TestHealthz(t *testing.T) {
	var store state.Store
	m := New(&store, Options{StaleAfter: 2 * time.Minute})
	now := roundAt.Add(2 * time.Second)
	m.now = func() time.Time { return now }
	h := m.Handler()
	check := func(step string, code int, body string) {
		t.Helper()
		rec := get(t, h, "/healthz")
		if rec.Code != code || !strings.Contains(rec.Body.String(), body) {
			t.Errorf("%s: %d %q, want %d with %q", step, rec.Code, rec.Body, code, body)
		}
	}
	check("before a round", http.StatusServiceUnavailable, "not ready: no round has completed yet")
	publish(&store, testPlan(), nil)
	check("after a round", http.StatusOK, "last round 2s ago")

	now = roundAt.Add(5 * time.Second)
	m.RoundFailed("resync", time.Millisecond, &machine.ReadError{Source: "inventory",
		Err: errors.New("read /proc/interrupts: malformed: line 3\nsecond line")})
	check("after a failed round", http.StatusServiceUnavailable,
		"unhealthy: the last round failed 0s ago: read /proc/interrupts: malformed: line 3 (last good round 5s ago)")
	if rec := get(t, h, "/healthz"); strings.Contains(rec.Body.String(), "second line") {
		t.Errorf("healthz quotes more than the error's first line: %q", rec.Body)
	}

	now = roundAt.Add(10 * time.Second)
	store.Publish(&state.State{Machine: store.Load().Machine, Plan: store.Load().Plan, Finished: now})
	check("after a good round again", http.StatusOK, "ok\nlast round 0s ago")

	now = now.Add(2*time.Minute + time.Second)
	check("no round for too long", http.StatusServiceUnavailable, "unhealthy: no round completed for 2m1s (limit 2m0s")
}
