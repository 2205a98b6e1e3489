package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/api"
	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/fight"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
)

// statusDaemon serves the HTTP handler of a daemon that ran one dry-run
// round over planFixture with banned_cpus 7 and an irqbalance env file
// banning CPU 0, finished at a fixed time, as `numairqd run` publishes
// it. It returns the fixture and the server's address.
func statusDaemon(t *testing.T) (*fakesys.Tree, string) {
	tree, store := statusStore(t)
	return tree, serveMetrics(t, metrics.New(store, metrics.Options{}))
}

// statusStore is statusDaemon's fixture and published round.
func statusStore(t *testing.T) (*fakesys.Tree, *state.Store) {
	tree := planFixture(t)
	tree.WriteFile("etc/default/irqbalance", "IRQBALANCE_BANNED_CPULIST=0\n")
	tree.WriteFile("proc/stat", "cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 100 0 50 750 0 5 10 0 0 0\ncpu1 100 0 50 750 0 5 10 0 0 0\nintr 0\n")
	cfg, err := config.Parse("/etc/numairqd/numairqd.yaml", []byte("banned_cpus: 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := machine.Read(machine.Roots{Sys: tree.Sys(), Proc: tree.Proc(), Etc: tree.Path("etc")}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.Took = 1500 * time.Microsecond
	m.Bans.EnvFile = "/etc/default/irqbalance" // not the temporary directory's name
	p := policy.Compute(m.Snapshot, m.Inventory, cfg, m.ToolBans(), policy.Memory{}, policy.Balancing{})
	res, _ := apply.New(nil, nil, apply.Options{DryRun: true}).Apply(context.Background(), p, policy.Memory{})
	var store state.Store
	store.Publish(&state.State{Machine: m, Plan: p, Apply: res, Planning: 500 * time.Microsecond, Trigger: "startup",
		Config: cfg, DryRun: true, Finished: time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)})
	return tree, &store
}

// fixClock makes statusNow start at 03:00:05 and step a second a call.
func fixClock(t *testing.T) {
	at := time.Date(2026, 12, 5, 3, 0, 5, 0, time.UTC)
	statusNow = func() time.Time { at = at.Add(time.Second); return at }
	t.Cleanup(func() { statusNow = time.Now })
}

// TestStatusGolden: the text and JSON views of a dry-run daemon on the
// 4-node fixture, the server's port replaced by PORT.
func TestStatusGolden(t *testing.T) {
	tree, addr := statusDaemon(t)
	fixClock(t)
	for _, format := range []string{"text", "json"} {
		code, stdout, stderr := runCmd("status", "--listen", addr, "--procfs", tree.Proc(), "--interval", "100ms", "--format", format)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		if strings.Contains(stdout, "\x1b") {
			t.Errorf("%s: escape codes on a stdout that is not a terminal", format)
		}
		golden(t, "status-4node."+format, []byte(strings.ReplaceAll(stdout, addr, "127.0.0.1:PORT")))
		if format == "text" {
			checkLines(t, stdout)
			continue
		}
		var f frame
		if err := json.Unmarshal([]byte(stdout), &f); err != nil {
			t.Fatal(err)
		}
		if f.Status == nil || f.Plan == nil || f.Rates == nil || f.Status.Generation != 1 || f.Plan.Generation != 1 ||
			len(f.Rates.CPUs) != 8 || len(f.Status.Bans) != 2 || f.Status.Bans[1].Source != "irqbalance_env" {
			t.Errorf("json frame: %+v", f)
		}
	}
}

// TestStatusWatchPipe: --watch into a pipe (not a terminal) prints one
// plain frame per refresh, without escape codes, until interrupted;
// --format json prints one JSON document a line.
func TestStatusWatchPipe(t *testing.T) {
	tree, addr := statusDaemon(t)
	for _, format := range []string{"text", "json"} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		var stderr bytes.Buffer
		go func() {
			v := &viewer{client: &http.Client{Timeout: 5 * time.Second}, addr: addr, procfs: tree.Proc()}
			done <- showStatus(ctx, v, format, true, 20*time.Millisecond, w, &stderr)
			w.Close()
		}()
		// Three frames, then Ctrl-C.
		lines := make(chan string)
		go func() {
			sc := bufio.NewScanner(r)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		var out strings.Builder
		timeout := time.After(30 * time.Second)
		for frames := 0; frames < 3; {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("%s: output ended after %q; stderr %q", format, out.String(), stderr.String())
				}
				out.WriteString(line + "\n")
				if strings.HasPrefix(line, "last round:") || strings.HasPrefix(line, "{") {
					frames++
				}
			case <-timeout:
				t.Fatalf("%s: no 3 frames in 30s: %q", format, out.String())
			}
		}
		cancel()
		for line := range lines {
			out.WriteString(line + "\n")
		}
		r.Close()
		if code := <-done; code != 0 {
			t.Errorf("%s: exit %d after Ctrl-C, want 0", format, code)
		}
		if strings.Contains(out.String(), "\x1b") {
			t.Errorf("%s: escape codes into a pipe", format)
		}
		if format == "json" {
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var f frame
				if err := json.Unmarshal([]byte(line), &f); err != nil || f.Status == nil {
					t.Errorf("json line %q: %v", line, err)
				}
			}
		} else if !strings.Contains(out.String(), "0000:41:00.0  virtio-pci/virtio_net eth0") {
			t.Errorf("text frames lack the NIC:\n%s", out.String())
		}
	}
}

// TestStatusNoDaemon: with nothing listening, status fails at once
// (exit 1), naming the address; a config with listen "" says why.
func TestStatusNoDaemon(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	start := time.Now()
	code, stdout, stderr := runCmd("status", "--listen", addr, "--interval", "10s")
	if code != 1 || stdout != "" || !strings.Contains(stderr, "no numairqd answers at "+addr) {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and the address", code, stdout, stderr)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s: waited for --interval before failing", took)
	}
	cfg := writeConfig(t, "listen: \"\"\n")
	if code, _, stderr := runCmd("status", "--config", cfg); code != 1 || !strings.Contains(stderr, cfg+` sets listen: "": the daemon serves no HTTP`) {
		t.Errorf("listen \"\": exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCmd("status", "--listen", "nohost"); code != 1 || !strings.Contains(stderr, "nohost") {
		t.Errorf("bad --listen: exit %d, stderr %q", code, stderr)
	}
	for _, d := range []string{"0s", "99ms"} {
		if code, _, stderr := runCmd("status", "--interval", d); code != 2 || !strings.Contains(stderr, "--interval "+d+": want at least 100ms") {
			t.Errorf("--interval %s: exit %d, stderr %q; want 2 and the value", d, code, stderr)
		}
	}
}

// TestStatusOnceInterrupted: Ctrl-C during a one-shot's interval exits
// 130 with nothing printed, not 0 as if it had shown the daemon.
func TestStatusOnceInterrupted(t *testing.T) {
	tree, addr := statusDaemon(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v := &viewer{client: &http.Client{Timeout: 5 * time.Second}, addr: addr, procfs: tree.Proc()}
	var stdout, stderr bytes.Buffer
	if code := showStatus(ctx, v, "text", false, time.Hour, &stdout, &stderr); code != 130 || stdout.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 130 and nothing", code, stdout.String(), stderr.String())
	}
}

// TestStatusMismatch: when /status and /plan stay of different rounds
// through the retries, the frame says so, in text and in JSON.
func TestStatusMismatch(t *testing.T) {
	mux := http.NewServeMux()
	serve := func(path string, doc any) {
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) { json.NewEncoder(w).Encode(doc) })
	}
	serve("/status", api.Status{Generation: 5, Online: "0-1", Allowed: "0-1"})
	serve("/plan", policy.Doc{Generation: 6})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	v := &viewer{client: srv.Client(), addr: strings.TrimPrefix(srv.URL, "http://"), procfs: t.TempDir()}
	f, err := v.frame()
	if err != nil {
		t.Fatal(err)
	}
	const want = "/status is of round 5 and /plan of round 6"
	if !strings.Contains(f.Mismatch, want) {
		t.Errorf("mismatch %q, want %q", f.Mismatch, want)
	}
	var b bytes.Buffer
	writeStatusText(&b, f)
	if lines := strings.Split(b.String(), "\n"); !strings.HasPrefix(lines[1], "warning: "+want) {
		t.Errorf("no warning under the first line:\n%s", b.String())
	}
	if js, _ := json.Marshal(f); !strings.Contains(string(js), `"mismatch":"`+want) {
		t.Errorf("json lacks mismatch: %s", js)
	}
}

// TestStatusBusy: a 503 is reported in the daemon's own words, which
// say whether no round has completed or every slot is busy.
func TestStatusBusy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "busy: 4 requests in flight and none finished within 5s; retry later", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	v := &viewer{client: srv.Client(), addr: strings.TrimPrefix(srv.URL, "http://"), procfs: t.TempDir()}
	_, err := v.frame()
	if err == nil || !strings.Contains(err.Error(), "cannot answer /status now: busy: 4 requests in flight") ||
		strings.Contains(err.Error(), "round") {
		t.Errorf("error %v, want the daemon's busy answer and no claim about rounds", err)
	}
}

// TestStatusRows: a frame is cut to a terminal's rows only when it does
// not fit, the notice counting the lines left out; a frame that fits
// exactly is whole.
func TestStatusRows(t *testing.T) {
	f := &frame{Address: "127.0.0.1:9768", Sampled: time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC), Error: "no numairqd answers"}
	for _, tc := range []struct {
		rows int
		want string
	}{
		{3, "numairqd at 127.0.0.1:9768  03:00:00 UTC\n\nno numairqd answers"},
		{2, "numairqd at 127.0.0.1:9768  03:00:00 UTC\n... 2 more lines (a taller terminal, or --format json)"},
	} {
		var out bytes.Buffer
		if code := emit(&out, io.Discard, "text", f, true, tc.rows); code != 0 || out.String() != tc.want {
			t.Errorf("%d rows: exit %d, %q; want %q", tc.rows, code, out.String(), tc.want)
		}
	}
}

// checkLines fails for a line wider than statusWidth or cut ("...").
func checkLines(t *testing.T, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > statusWidth || strings.HasSuffix(line, "...") {
			t.Errorf("line %d, %d columns, wider than %d or cut: %q", i+1, n, statusWidth, line)
		}
	}
}

// TestStatusRates: interrupts per second per CPU and IRQ, and the share
// of hardirq+softirq ticks, between two samples 2s apart; a count that
// went down (an IRQ freed and requested again) counts from zero.
func TestStatusRates(t *testing.T) {
	proc := t.TempDir()
	write := func(ints, stat string) {
		for name, s := range map[string]string{"interrupts": ints, "stat": stat} {
			if err := os.WriteFile(filepath.Join(proc, name), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	const head = "           CPU0       CPU1\n"
	write(head+"  24:        100        500  PCI-MSIX-0000:41:00.0   0-edge  eth0-0\n  25:        900          0  PCI-MSIX-0000:41:00.0   1-edge  eth0-1\n NMI:   5   5   Non-maskable interrupts\n",
		"cpu  0 0 0 0 0 0 0 0\ncpu0 100 0 50 750 0 5 10 0\ncpu1 100 0 50 750 0 5 10 0\n")
	t0 := time.Unix(1000, 0)
	a, err := readProcSample(proc, t0)
	if err != nil {
		t.Fatal(err)
	}
	// CPU 0: 200 ticks, 30 of them irq+softirq; CPU 1: 100 ticks, none.
	write(head+"  24:        300        700  PCI-MSIX-0000:41:00.0   0-edge  eth0-0\n  25:         40          0  PCI-MSIX-0000:41:00.0   1-edge  eth0-1\n",
		"cpu  0 0 0 0 0 0 0 0\ncpu0 200 0 50 820 0 15 30 0\ncpu1 150 0 50 800 0 5 10 0\n")
	b, err := readProcSample(proc, t0.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	r := b.since(a)
	if r.Seconds != 2 || r.IRQs["24"] != 200 || r.IRQs["25"] != 20 || len(r.CPUs) != 2 {
		t.Fatalf("rates %+v", r)
	}
	if c := r.CPUs[0]; c.PerSecond != 120 || c.IRQTimePercent == nil || *c.IRQTimePercent != 15 {
		t.Errorf("CPU 0: %v/s, %v%%; want 120 and 15", c.PerSecond, c.IRQTimePercent)
	}
	if c := r.CPUs[1]; c.PerSecond != 100 || c.IRQTimePercent == nil || *c.IRQTimePercent != 0 {
		t.Errorf("CPU 1: %v/s, %v%%; want 100 and 0", c.PerSecond, c.IRQTimePercent)
	}
	// Without /proc/stat the interrupt rates stay, the times go.
	os.Remove(filepath.Join(proc, "stat"))
	c, err := readProcSample(proc, t0.Add(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if r := c.since(b); r.CPUs[0].IRQTimePercent != nil || !strings.Contains(r.Error, "stat") {
		t.Errorf("without /proc/stat: %+v", r)
	}
}

// TestQueueRuns: queues placed alike compact into one line, their
// reasons merged where only stepping numbers differ; anything else
// breaks the run.
func TestQueueRuns(t *testing.T) {
	for _, tc := range []struct {
		masks []string
		want  string
		ok    bool
	}{
		{[]string{"4"}, "4", true},
		{[]string{"4", "5", "6"}, "4-6", true},
		{[]string{"0-7", "0-7"}, "all 0-7", true},
		{[]string{"4", "6"}, "", false},
		{[]string{"4", "4-5"}, "", false},
	} {
		if got, ok := maskPattern(tc.masks); got != tc.want || ok != tc.ok {
			t.Errorf("maskPattern(%v) = %q, %v; want %q, %v", tc.masks, got, ok, tc.want, tc.ok)
		}
	}
	if got, ok := mergeWords([]string{"queue 0 -> CPU 4, hop 0", "queue 1 -> CPU 5, hop 0"}); !ok || got != "queue 0-1 -> CPU 4-5, hop 0" {
		t.Errorf("merge: %q %v", got, ok)
	}
	if _, ok := mergeWords([]string{"queue 0 -> CPU 4", "queue 1 -> CPU 7"}); ok {
		t.Error("merged numbers that do not step")
	}
	if _, ok := mergeWords([]string{"hop 0", "node 0"}); ok {
		t.Error("merged different words")
	}
	// extends, comparing a queue with the run's first and last only,
	// agrees with maskPattern and mergeWords over the whole run, for
	// every run of up to four queues built from these masks and reasons.
	masks := []string{"4", "5", "6", "7", "04", "4-5", ""}
	whys := []string{"q 4 -> 4,", "q 5 -> 5,", "q 6 -> 6,", "q 5 -> 6,", "q 4 -> 4;", "r"}
	var grow func(run []queueEntry)
	grow = func(run []queueEntry) {
		if len(run) == 4 {
			return
		}
		for _, m := range masks {
			for _, w := range whys {
				e := queueEntry{queue: len(run), now: "0-7", planned: m, why: w}
				if len(run) == 0 {
					grow([]queueEntry{e})
					continue
				}
				var ps, ws []string
				for _, x := range append(slices.Clone(run), e) {
					ps, ws = append(ps, x.planned), append(ws, x.why)
				}
				p, ok1 := maskPattern(ps)
				w, ok2 := mergeWords(ws)
				if got := extends(run, e); got != (ok1 && ok2) {
					t.Fatalf("extends(%v, %v) = %v, want %v", ps[:len(run)], e, got, ok1 && ok2)
				}
				n := len(ps)
				joined, _ := joinMasks(ps[0], ps[n-1], n)
				if ok1 && ok2 && (joined != p || joinWords(ws[0], ws[n-1]) != w) {
					t.Fatalf("join of %v %v: %q %q, want %q %q", ps, ws, joined, joinWords(ws[0], ws[n-1]), p, w)
				}
				if ok1 && ok2 {
					grow(append(slices.Clone(run), e))
				}
			}
		}
	}
	grow(nil)
	// A device of 4,096 queues on CPU k each compacts to one line.
	d := policy.Device{}
	all := list(t, "0-4095")
	for k := range 4096 {
		d.IRQs = append(d.IRQs, policy.IRQ{Number: 100 + k, Role: policy.RoleQueue, Queue: k, Current: all, Planned: cpumask.New(k),
			Reason: "linear: queue " + strconv.Itoa(k) + " -> CPU " + strconv.Itoa(k) + ", hop 0"})
	}
	start := time.Now()
	runs := queueRuns(d, &api.Status{}, map[int]int{}, nil)
	if len(runs) != 1 || runs[0].label != "q0-4095" || runs[0].planned != "0-4095" || runs[0].why != "linear: queue 0-4095 -> CPU 0-4095, hop 0" {
		t.Errorf("4096 queues: %+v", runs)
	}
	t.Logf("4096 queues compacted in %s", time.Since(start))
}

// TestStatusTextFailed: a failed write and an effective mismatch are
// listed under the round with their outcome and errno, and marked in
// their device's table; a fight with another writer is listed too;
// long lines wrap within statusWidth.
func TestStatusTextFailed(t *testing.T) {
	reason := "numa-hop: queue 0 -> CPU 4, hop 0, distance 10 from node 2 of a device whose reason is long enough to wrap"
	f := &frame{Address: "127.0.0.1:9768", Sampled: time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC),
		Status: &api.Status{Generation: 3, Trigger: "uevent", Online: "0-7", Allowed: "0-7",
			Nodes: []api.StatusNode{{Node: 0, CPUs: "0-7"}}, IRQs: map[string]int{"failed": 1, "effective_mismatch": 1},
			Bans: []api.StatusBan{{Source: "irqbalance_env", CPUs: "0", File: "/etc/sysconfig/" + strings.Repeat("x", 90)}},
			Failed: []api.StatusFailed{
				{IRQ: 25, Name: "eth0-0", Device: "0000:41:00.0", State: "failed", Kind: "no_space", Errno: "ENOSPC", Planned: "4", Reason: reason},
				{IRQ: 26, Name: "eth0-1", Device: "0000:41:00.0", State: "effective_mismatch", Planned: "5", Effective: "0", Reason: "r"},
			},
			Fights: []fight.Fight{{IRQ: 27, Name: "eth0-2", Device: "0000:41:00.0", Want: cpumask.New(6), Found: cpumask.New(0),
				Writer: fight.Writer{Kind: fight.Irqbalance, PID: 812}, Since: time.Date(2026, 12, 5, 2, 59, 0, 0, time.UTC), Overwrites: 4,
				Next: time.Date(2026, 12, 5, 3, 0, 30, 0, time.UTC)}}},
		Plan: &policy.Doc{Generation: 3, Plan: &policy.Plan{Devices: []policy.Device{{PCI: "0000:41:00.0", Driver: "ixgbe", Policy: "numa-hop",
			IRQs: []policy.IRQ{
				{Number: 25, Name: "eth0-0", Role: policy.RoleQueue, Queue: 0, Current: list(t, "0-7"), Planned: cpumask.New(4), Reason: reason},
				{Number: 26, Name: "eth0-1", Role: policy.RoleQueue, Queue: 1, Current: list(t, "0-7"), Planned: cpumask.New(5), Reason: "r"},
			}}}}}}
	var b bytes.Buffer
	writeStatusText(&b, f)
	out := b.String()
	for _, want := range []string{
		"IRQ 25 eth0-0 (0000:41:00.0) failed no_space ENOSPC, planned 4: numa-hop",
		"IRQ 26 eth0-1 (0000:41:00.0) effective_mismatch, planned 5, effective 0: r",
		"FAILED no_space ENOSPC: numa-hop",
		"EFFECTIVE_MISMATCH effective 0: r",
		"1 failed, 1 effective mismatch",
		"IRQ 27 eth0-2 in a fight with irqbalance (pid 812) since 02:59:00: 4 overwrites, numairqd wants 6,",
		"found 0; next rewrite 03:00:30",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	checkLines(t, out)
}

// TestStatusTextWide: on a large machine (an allowed list of every other
// CPU of 512, 8,192 IRQs, a queue on a wide mask with a long reason)
// every line fits statusWidth and nothing is lost: the lists wrap after
// commas, the reason goes under its row.
func TestStatusTextWide(t *testing.T) {
	var even, managed []string
	for cpu := 0; cpu < 512; cpu += 2 {
		even = append(even, strconv.Itoa(cpu))
	}
	for irq := 1000; irq < 1200; irq++ {
		managed = append(managed, strconv.Itoa(irq))
	}
	allowed := strings.Join(even, ",")
	wide := strings.Join(even[:40], ",")
	reason := "numa-hop: queue 0 -> CPUs " + wide + ", hop 0, distance 10 from node 0 of a device whose reason is long"
	f := &frame{Address: "127.0.0.1:9768", Sampled: time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC),
		Status: &api.Status{Generation: 1, Online: "0-511", Allowed: allowed, BansError: "/etc/default/irqbalance: " + strings.Repeat("unreadable ", 12),
			Nodes: []api.StatusNode{{Node: 0, CPUs: "0-511"}}, ManagedOnBanned: []int{},
			IRQs: map[string]int{"placed": 8192, "managed": 8192, "ignored": 8192, "failed": 8192, "effective_mismatch": 8192, "effective_pending": 8192}},
		Plan: &policy.Doc{Generation: 1, Plan: &policy.Plan{Devices: []policy.Device{{PCI: "0000:41:00.0", Driver: "mlx5_core", Policy: "numa-hop",
			IRQs: []policy.IRQ{{Number: 100, Name: "mlx5_comp0", Role: policy.RoleQueue, Queue: 0, Current: list(t, wide),
				Planned: list(t, allowed), Reason: reason}}}}}}}
	for _, irq := range managed {
		n, _ := strconv.Atoi(irq)
		f.Status.ManagedOnBanned = append(f.Status.ManagedOnBanned, n)
	}
	var b bytes.Buffer
	writeStatusText(&b, f)
	out := b.String()
	checkLines(t, out)
	flat := strings.Join(strings.Fields(out), "")
	for _, want := range []string{
		"CPUsonline0-511,allowed" + allowed + "\n",
		"8192effectivemismatch,8192pendingfirstinterrupt",
		"(numairqdcannotmovethem):" + strings.Join(managed, ","),
		strings.Repeat("unreadable", 12),
		wide, allowed,
		strings.Join(strings.Fields(reason), ""),
	} {
		want = strings.TrimSuffix(want, "\n")
		if !strings.Contains(flat, want) {
			t.Errorf("lost %q from\n%s", want, out)
		}
	}
	if !strings.Contains(out, "\n      numa-hop: queue 0 -> CPUs 0,2,") {
		t.Errorf("the reason is not under its row, %d columns in:\n%s", whyIndent, out)
	}
}

// TestStatusWatchTerminal: on a terminal (a pty here) every refresh
// clears the screen and redraws, cut to the terminal's height.
func TestStatusWatchTerminal(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pts: %v", err)
	}
	defer pts.Close()
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 12, Col: 100}); err != nil {
		t.Fatal(err)
	}
	tree, addr := statusDaemon(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		v := &viewer{client: &http.Client{Timeout: 5 * time.Second}, addr: addr, procfs: tree.Proc()}
		done <- showStatus(ctx, v, "text", true, 20*time.Millisecond, pts, io.Discard)
	}()
	var out []byte
	buf := make([]byte, 64<<10)
	for bytes.Count(out, []byte("\x1b[H\x1b[2J")) < 2 {
		k, err := ptmx.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, buf[:k]...)
	}
	cancel()
	go func() { // a refresh may be writing: keep draining until the pty closes
		for {
			if _, err := ptmx.Read(make([]byte, 4096)); err != nil {
				return
			}
		}
	}()
	if code := <-done; code != 0 {
		t.Errorf("exit %d after Ctrl-C", code)
	}
	frame := strings.Split(string(out), "\x1b[H\x1b[2J")[1]
	if lines := strings.Count(frame, "\n"); lines > 12 || !strings.Contains(frame, "more lines") {
		t.Errorf("frame of %d lines on a 12-row terminal:\n%s", lines, frame)
	}
}

// list is the mask of s in the list format.
func list(t *testing.T, s string) cpumask.Mask {
	t.Helper()
	m, err := cpumask.ParseList(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// maskPattern, the oracle of extends and joinMasks, shows the masks of a run: the mask when one, "all M"
// when every queue has M, "a-b" when they are the single CPUs a, a+1,
// ..., b. ok is false for any other run.
func maskPattern(ms []string) (string, bool) {
	if len(ms) == 1 {
		return ms[0], true
	}
	if slices.Equal(ms, slices.Repeat(ms[:1], len(ms))) {
		if ms[0] == "" {
			return "", true
		}
		return "all " + ms[0], true
	}
	start, err := strconv.Atoi(ms[0])
	if err != nil {
		return "", false
	}
	for i, m := range ms {
		if m != strconv.Itoa(start+i) {
			return "", false
		}
	}
	return ms[0] + "-" + ms[len(ms)-1], true
}

// mergeWords merges sentences that differ only in integers stepping by
// one from each to the next: each such word becomes "a-b".
func mergeWords(ss []string) (string, bool) {
	if len(ss) == 1 {
		return ss[0], true
	}
	words := make([][]string, len(ss))
	for i, s := range ss {
		if words[i] = strings.Split(s, " "); len(words[i]) != len(words[0]) {
			return "", false
		}
	}
	out := slices.Clone(words[0])
	for k := range out {
		num, tail := splitNumber(words[0][k])
		same := true
		for i := range words {
			same = same && words[i][k] == words[0][k]
		}
		if same {
			continue
		}
		start, err := strconv.Atoi(num)
		if err != nil {
			return "", false
		}
		for i := range words {
			if n, t := splitNumber(words[i][k]); n != strconv.Itoa(start+i) || t != tail {
				return "", false
			}
		}
		out[k] = num + "-" + strconv.Itoa(start+len(words)-1) + tail
	}
	return strings.Join(out, " "), true
}
