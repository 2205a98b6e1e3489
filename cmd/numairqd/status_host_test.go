package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/api"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/policy"
)

// serveMetrics serves m's HTTP API and returns its address.
func serveMetrics(t *testing.T, m *metrics.Metrics) string {
	srv := httptest.NewServer(api.New(m).Handler())
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestStatusConfigRejected: a rejected config shows on a line of its
// own under the header, with when, the first problem and how many more,
// until a successful load clears it.
func TestStatusConfigRejected(t *testing.T) {
	_, bad := config.Parse("/etc/numairqd/numairqd.yaml", []byte("resync_interval: 1ms\nbanned_cpus: x\n"))
	if bad == nil {
		t.Fatal("the bad config parsed")
	}
	first, _, _ := strings.Cut(bad.Error(), "\n")
	tree, store := statusStore(t)
	m := metrics.New(store, metrics.Options{})
	m.ConfigRejected(bad, time.Date(2026, 12, 5, 2, 59, 0, 0, time.UTC))
	addr := serveMetrics(t, m)
	fixClock(t)
	code, stdout, stderr := runCmd("status", "--listen", addr, "--procfs", tree.Proc(), "--interval", "100ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, under, _ := strings.Cut(stdout, "\n")
	under, _, _ = strings.Cut(under, "\nlast round:")
	want := "CONFIG REJECTED at 02:59:00 (1m7s ago), the previous config stays in force: " + first + " (and 1 more problem: --format json)"
	if got := strings.Join(strings.Fields(under), " "); got != want {
		t.Errorf("under the header\n got %s\nwant %s\nin\n%s", got, want, stdout)
	}
	checkLines(t, stdout)
	_, stdout, _ = runCmd("status", "--listen", addr, "--procfs", tree.Proc(), "--interval", "100ms", "--format", "json")
	var f frame
	if err := json.Unmarshal([]byte(stdout), &f); err != nil {
		t.Fatal(err)
	}
	if r := f.Status.ConfigRejected; r == nil || r.Error != bad.Error() || !r.At.Equal(time.Date(2026, 12, 5, 2, 59, 0, 0, time.UTC)) {
		t.Errorf("config_rejected %+v, want the error at 02:59:00", r)
	}

	m.ConfigReload(true, time.Now())
	_, stdout, _ = runCmd("status", "--listen", addr, "--procfs", tree.Proc(), "--interval", "100ms")
	if strings.Contains(stdout, "REJECTED") {
		t.Errorf("a successful load left the rejection shown:\n%s", stdout)
	}
}

// TestStatusTextSmall: a frame of one single-queue device on allowed
// CPUs, its config rejected: nothing in it needs the legend, so none.
func TestStatusTextSmall(t *testing.T) {
	at := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	f := &frame{Address: "127.0.0.1:9768", Sampled: at,
		Status: &api.Status{Generation: 2, Trigger: "reload", Finished: at.Add(-time.Second), DryRun: true, Online: "0-1", Allowed: "0-1",
			Config: "/etc/numairqd/numairqd.yaml", Consistent: true, Writes: api.StatusWrites{DryRun: 1}, IRQs: map[string]int{"placed": 1},
			Nodes:          []api.StatusNode{{Node: 0, CPUs: "0-1"}},
			ConfigRejected: &api.StatusRejected{At: at.Add(-30 * time.Second), Error: "/etc/numairqd/numairqd.yaml:3: xps: unknown value \"on\""}},
		Plan: &policy.Doc{Generation: 2, Plan: &policy.Plan{Devices: []policy.Device{{PCI: "0000:00:03.0", Driver: "e1000e", Interfaces: []string{"eth1"},
			Policy: "numa-hop", IRQs: []policy.IRQ{{Number: 30, Name: "eth1", Role: policy.RoleQueue, Queue: 0, Current: list(t, "0-1"),
				Planned: list(t, "1"), Hop: 0, Distance: 10, Reason: "numa-hop: queue 0 -> CPU 1, hop 0, distance 10 from node 0"}}}}}}}
	var b bytes.Buffer
	writeStatusText(&b, f)
	golden(t, "status-small.text", b.Bytes())
}

// TestStatusOtherMachine: a daemon whose boot_id is not --procfs's runs
// on another machine: no rates from this one, a line saying why, and no
// wait for a second sample; with the same boot_id the rates show.
func TestStatusOtherMachine(t *testing.T) {
	tree, store := statusStore(t)
	tree.WriteFile("proc/sys/kernel/random/boot_id", "4f0c5e8a-1b2d-4c3e-9f00-000000000001\n")
	other := serveMetrics(t, metrics.New(store, metrics.Options{BootID: "4f0c5e8a-1b2d-4c3e-9f00-000000000002"}))
	same := serveMetrics(t, metrics.New(store, metrics.Options{BootID: "4f0c5e8a-1b2d-4c3e-9f00-000000000001"}))
	fixClock(t)

	start := time.Now()
	code, stdout, stderr := runCmd("status", "--listen", other, "--procfs", tree.Proc(), "--interval", "30s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s: waited for a second sample of rates it does not show", took)
	}
	why := "rates: none: the daemon at " + other + " runs on another machine (its boot_id is not " + tree.Proc() + "'s), whose interrupts " +
		tree.Proc() + " does not count"
	if !strings.Contains(strings.Join(strings.Fields(stdout), " "), why) ||
		!strings.Contains(stdout, "virtio_net eth0  node 2  policy linear  - IRQ/s\n") || !strings.Contains(stdout, "   0*   0        -      -     1") {
		t.Errorf("rates from this machine shown for another's daemon:\n%s", stdout)
	}

	code, stdout, stderr = runCmd("status", "--listen", same, "--procfs", tree.Proc(), "--interval", "100ms")
	if code != 0 || strings.Contains(stdout, "rates:") || !strings.Contains(stdout, "policy linear  0.0 IRQ/s\n") {
		t.Errorf("same machine: exit %d, %s\n%s", code, stderr, stdout)
	}
}
