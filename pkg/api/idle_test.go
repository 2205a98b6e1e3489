package api

import (
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
)

// countingListener counts the connections it accepted.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// inUse is the heap and the goroutine stacks in use after a collection.
func inUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

// TestIdleConnections: 300 connections opened and held without a
// request do not keep /healthz or /metrics from answering within a
// second, cost the server a bounded amount of memory, and are closed by
// the server after ReadHeaderTimeout, which gives that memory back.
func TestIdleConnections(t *testing.T) {
	const idle = 300
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inner, err := Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &countingListener{Listener: inner}
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, newAPI(testStore(t)).Handler(), zap.NewNop()) }()
	addr := "http://" + ln.Addr().String()
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	getOK := func(path string) {
		t.Helper()
		start := time.Now()
		resp, err := client.Get(addr + path)
		if err != nil {
			t.Fatalf("GET %s with %d idle connections: %v", path, idle, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s with %d idle connections: %d", path, idle, resp.StatusCode)
		}
		t.Logf("GET %s: %s", path, time.Since(start).Round(time.Microsecond))
	}
	getOK("/metrics") // the registry's first gather allocates what it keeps
	before := inUse()

	conns := make([]net.Conn, 0, idle)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range idle {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for deadline := time.Now().Add(time.Second); ln.n.Load() < idle+1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server accepted %d of %d connections in a second", ln.n.Load()-1, idle)
		}
	}
	held := inUse()
	getOK("/healthz")
	getOK("/metrics")

	grown := int64(held) - int64(before)
	t.Logf("heap+stacks in use: %.1f MiB before, %.1f MiB with %d idle connections (%+.1f KiB each)",
		float64(before)/(1<<20), float64(held)/(1<<20), idle, float64(grown)/1024/idle)
	if grown > 32<<20 {
		t.Errorf("%d idle connections grew the heap and stacks by %.1f MiB, want under 32 MiB", idle, float64(grown)/(1<<20))
	}

	// The server hangs up on them after ReadHeaderTimeout (5s).
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("an idle connection read %d bytes, %v; want the server's EOF", n, err)
		}
	}
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		after := inUse()
		if int64(after)-int64(before) < 2<<20 || time.Now().After(deadline) {
			t.Logf("heap+stacks in use once the server closed them: %.1f MiB", float64(after)/(1<<20))
			if int64(after)-int64(before) > 4<<20 {
				t.Errorf("after the idle connections closed: %.1f MiB in use, want within 4 MiB of %.1f", float64(after)/(1<<20), float64(before)/(1<<20))
			}
			break
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return with idle connections open")
	}
}
