// Package httpload measures a dry-run numairqd's HTTP server under
// concurrent clients (issue 29): a real daemon process on the 8,192-IRQ
// scale fixture (internal/fakesys), 32 concurrent /plan clients and 50
// concurrent /metrics scrapers, every answer checked, the daemon's
// VmHWM and VmRSS read from its /proc/PID/status around each phase.
//
//	go build -o /tmp/numairqd ./cmd/numairqd
//	HTTPLOAD_BIN=/tmp/numairqd go test -v -count=1 ./bench/httpload
package httpload

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
)

// The load: the figures were 32 /plan clients and 3,000
// /metrics requests at concurrency 50.
const (
	planClients    = 32
	planRounds     = 5
	metricsClients = 50
	metricsEach    = 60 // requests per scraper, one after another
)

func TestHTTPUnderLoad(t *testing.T) {
	bin := os.Getenv("HTTPLOAD_BIN")
	if bin == "" {
		t.Skip("HTTPLOAD_BIN is not set: the numairqd binary to measure (go build -o /tmp/numairqd ./cmd/numairqd)")
	}
	tree := fakesys.New(t)
	tree.AddScaleHost()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "numairqd.yaml")
	if err := os.WriteFile(cfg, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--dry-run", "--sysfs", tree.Sys(), "--procfs", tree.Proc(),
		"--etc", dir, "--config", cfg, "--listen", "127.0.0.1:0", "--lock-file", "", "--reload-status", "",
		"--no-events", "--log.format", "json")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	defer func() { cancel(); <-exited }()
	addrc := make(chan string, 1)
	go func() {
		// Drain the daemon's log (dry-run logs every would-be write) and
		// pick the bound address out of it.
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving HTTP" {
				addrc <- line.Addr
			}
		}
		_ = cmd.Wait()
	}()
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a
	case <-exited:
		t.Fatal("numairqd exited before serving HTTP")
	case <-time.After(2 * time.Minute):
		t.Fatal("numairqd did not log its HTTP address within 2 minutes")
	}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxConnsPerHost: metricsClients, MaxIdleConnsPerHost: metricsClients}}
	defer client.CloseIdleConnections()
	ready := time.Now().Add(2 * time.Minute)
	for {
		if code, _, _, err := fetch(client, base+"/healthz"); err == nil && code == http.StatusOK {
			break
		}
		if time.Now().After(ready) {
			t.Fatal("/healthz not 200 within 2 minutes: no round completed")
		}
		time.Sleep(100 * time.Millisecond)
	}

	pid := cmd.Process.Pid
	startMem := memory(t, pid)
	t.Logf("daemon pid %d ready: %s", pid, startMem)

	// Memory after the first round and after the last: what the daemon
	// holds per state, and whether further clients add to it.
	var planSize int
	var plans []time.Duration
	var firstMem mem
	for round := range planRounds {
		ts, sizes := phase(t, client, base+"/plan", planClients, 1)
		plans = append(plans, ts...)
		if round == 0 {
			firstMem = memory(t, pid)
			if len(sizes) > 0 {
				planSize = sizes[0]
			}
		}
	}
	planMem := memory(t, pid)
	scrapes, _ := phase(t, client, base+"/metrics", metricsClients, metricsEach)
	endMem := memory(t, pid)

	t.Logf("/plan: %d rounds of %d concurrent clients, %d answers of %.2f MiB: per request %s", planRounds, planClients,
		len(plans), float64(planSize)/(1<<20), spread(plans))
	t.Logf("/metrics: %d concurrent scrapers x %d = %d answers: per request %s", metricsClients, metricsEach, len(scrapes), spread(scrapes))
	t.Logf("memory: ready %s; after the first /plan round %s; after all %d %s; after /metrics %s",
		startMem, firstMem, planRounds, planMem, endMem)
}

// phase runs clients goroutines, each GETting url each times, and
// returns the times of the answers that were 200 with a body and their
// sizes; every other answer is an error of the test.
func phase(t *testing.T, client *http.Client, url string, clients, each int) (times []time.Duration, sizes []int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	refused := map[string]int{}
	start := make(chan struct{})
	for range clients {
		wg.Go(func() {
			<-start
			for range each {
				t0 := time.Now()
				code, n, body, err := fetch(client, url)
				d := time.Since(t0)
				mu.Lock()
				switch {
				case err != nil:
					refused[err.Error()]++
				case code != http.StatusOK || n == 0:
					refused[fmt.Sprintf("%d %.80q", code, body)]++
				default:
					times, sizes = append(times, d), append(sizes, n)
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	for what, n := range refused {
		t.Errorf("%s: %d of %d answers: %s", url, n, clients*each, what)
	}
	return times, sizes
}

// fetch GETs url and reads the whole body; it returns the status, the
// body's size and its first bytes.
func fetch(client *http.Client, url string) (code, size int, head string, err error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, 0, "", err
	}
	defer resp.Body.Close()
	b := make([]byte, 80)
	n, _ := io.ReadFull(resp.Body, b)
	rest, err := io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, n + int(rest), strings.TrimSpace(string(b[:n])), err
}

// mem is a process's peak and current resident set, from its status.
type mem struct{ hwm, rss int }

func (m mem) String() string {
	return fmt.Sprintf("VmHWM %.1f MiB, VmRSS %.1f MiB", float64(m.hwm)/1024, float64(m.rss)/1024)
}

func memory(t *testing.T, pid int) mem {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var m mem
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmHWM" && k != "VmRSS") {
			continue
		}
		kib, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		if err != nil {
			t.Fatalf("/proc/%d/status: %q: %v", pid, line, err)
		}
		if k == "VmHWM" {
			m.hwm = kib
		} else {
			m.rss = kib
		}
	}
	if m.hwm == 0 || m.rss == 0 {
		t.Fatalf("/proc/%d/status has no VmHWM or VmRSS", pid)
	}
	return m
}

// spread is "median (min-max)" of ds in milliseconds.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "no answers"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return fmt.Sprintf("median %.1f ms (%.1f-%.1f)", ms(s[len(s)/2]), ms(s[0]), ms(s[len(s)-1]))
}
