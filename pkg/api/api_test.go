package api

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

	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
)

func TestHandler(t *testing.T) {
	var store state.Store
	a := newAPI(&store)
	a.now = func() time.Time { return roundAt.Add(2500 * time.Millisecond) }
	h := a.Handler()

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

	store.Publish(goldenState(t))
	rec = get(t, h, "/healthz")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), "ok\n") || !strings.Contains(rec.Body.String(), "2.5s ago") {
		t.Errorf("/healthz after a round: %d %q, want 200 ok with the age", rec.Code, rec.Body)
	}
	rec = get(t, h, "/plan")
	var doc policy.Doc
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" || json.Unmarshal(rec.Body.Bytes(), &doc) != nil {
		t.Errorf("/plan: %d %q %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	if doc.Generation != 1 || doc.Allowed.String() != "4-7" || len(doc.Devices) != 3 || doc.Devices[0].IRQs[1].Planned.String() != "4" {
		t.Errorf("/plan = %+v, want generation 1 and goldenState's plan", doc)
	}
	rec = get(t, h, "/metrics")
	for _, want := range []string{
		`numairqd_irqs{device="0000:41:00.0",policy="numa-hop",state="placed"} 3`,
		`numairqd_device_mean_numa_distance{device="0000:41:00.0"} 20`,
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
	_ = a.Handler()
}

func TestServe(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	core, logs := observer.New(zap.InfoLevel)
	a := newAPI(testStore(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	ln, err := Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		done <- Serve(ctx, ln, a.Handler(), zap.New(core))
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

// TestHealthz: 503 with Health's reason, else 200 with the last
// round's age and time (metrics.TestHealth tests the reasons).
func TestHealthz(t *testing.T) {
	var store state.Store
	a := New(metrics.New(&store, metrics.Options{StaleAfter: 2 * time.Minute}))
	now := roundAt.Add(2 * time.Second)
	a.now = func() time.Time { return now }
	h := a.Handler()
	check := func(step string, code int, body string) {
		t.Helper()
		rec := get(t, h, "/healthz")
		if rec.Code != code || rec.Body.String() != body {
			t.Errorf("%s: %d %q, want %d %q", step, rec.Code, rec.Body, code, body)
		}
	}
	check("before a round", http.StatusServiceUnavailable, "not ready: no round has completed yet\n")
	store.Publish(goldenState(t))
	check("after a round", http.StatusOK, "ok\nlast round 2s ago (2026-03-01T12:00:00Z)\n")
	now = now.Add(2 * time.Minute)
	check("no round for too long", http.StatusServiceUnavailable, "unhealthy: no round completed for 2m2s (limit 2m0s, twice resync_interval)\n")
}
