package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/capture"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/netdev"
	"github.com/numairqd/numairqd/pkg/policy"
)

// relinked is an inventory.Netdev that links rx and tx queue K of the
// fixture's eth0 (ifindex 2) to a NAPI with IRQ irqs[K], as a driver
// that numbered its vectors unlike their names.
type relinked struct{ irqs []int }

func (n relinked) Queues() ([]netdev.Queue, error) {
	var qs []netdev.Queue
	for k := range n.irqs {
		qs = append(qs, netdev.Queue{Ifindex: 2, Type: netdev.QueueRX, ID: k, NAPI: 100 + k},
			netdev.Queue{Ifindex: 2, Type: netdev.QueueTX, ID: k, NAPI: 100 + k})
	}
	return qs, nil
}

func (n relinked) NAPIs() ([]netdev.NAPI, error) {
	var ns []netdev.NAPI
	for k, irq := range n.irqs {
		ns = append(ns, netdev.NAPI{Ifindex: 2, ID: 100 + k, IRQ: irq, PID: -1})
	}
	return ns, nil
}

// replayFixture is planFixture with an irqbalance env file banning CPU
// 0 and a config banning CPU 7, captured with nd's answers into a
// file; it returns the tree, the config and the capture's path.
func replayFixture(t *testing.T, nd inventory.Netdev) (*fakesys.Tree, string, string) {
	t.Helper()
	tree := planFixture(t)
	tree.WriteFile("etc/default/irqbalance", "IRQBALANCE_BANNED_CPULIST=0\n")
	writeStat(tree)
	cfg := writeConfig(t, "banned_cpus: 7\n")
	path := filepath.Join(t.TempDir(), "host.tar.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := capture.Write(f, capture.Source{Sys: tree.Sys(), Proc: tree.Proc(), Etc: tree.Path("etc"), Config: cfg, Netdev: nd}); err != nil {
		t.Fatalf("capture: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return tree, cfg, path
}

// writeStat gives the tree's 8 CPUs a /proc/stat.
func writeStat(tree *fakesys.Tree) {
	stat := "cpu  0 0 0 0 0 0 0 0 0 0\n"
	for c := range 8 {
		stat += fmt.Sprintf("cpu%d 100 0 50 750 0 5 10 0 0 0\n", c)
	}
	tree.WriteFile("proc/stat", stat+"intr 0\n")
}

// placement is what a plan decides, without the paths and times that
// name where it was read: each IRQ's queue, role and CPUs, each tx
// queue's XPS CPUs.
type placement struct {
	Allowed string
	IRQs    map[int]string
	TxQs    map[string]string
}

func placementOf(t *testing.T, doc []byte) placement {
	t.Helper()
	var d policy.Doc
	if err := json.Unmarshal(doc, &d); err != nil || d.Plan == nil {
		t.Fatalf("plan JSON: %v\n%s", err, doc)
	}
	p := placement{Allowed: d.Allowed.String(), IRQs: map[int]string{}, TxQs: map[string]string{}}
	for _, dev := range d.Devices {
		for _, q := range dev.IRQs {
			p.IRQs[q.Number] = fmt.Sprintf("%s %s queue %d from %q managed %v current %s planned %s",
				dev.PCI, q.Role, q.Queue, q.QueueSource, q.Managed, q.Current, q.Planned)
		}
		for _, tq := range dev.TxQueues {
			p.TxQs[fmt.Sprintf("%s tx-%d", tq.Interface, tq.Queue)] = fmt.Sprintf("irq %d current %s planned %s", tq.IRQ, tq.Current, tq.Planned)
		}
	}
	return p
}

// TestPlanCaptureIsLive: `plan --capture` of a capture of a fixture
// tree plans what a read of the tree plans, with the capture's config
// and bans, and with the netlink answers recorded: the IRQs netlink
// relinks take its queues, not their names'.
func TestPlanCaptureIsLive(t *testing.T) {
	for _, tc := range []struct {
		name string
		nd   inventory.Netdev
	}{
		{"names", nil},
		{"netlink", relinked{irqs: []int{27, 25, 29}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, cfgPath, path := replayFixture(t, tc.nd)
			cfg, err := config.Load(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			p, _, err := planOnce(machine.Roots{Sys: tree.Sys(), Proc: tree.Proc(), Etc: tree.Path("etc"), Netdev: tc.nd}, cfg, policy.Balancing{})
			if err != nil {
				t.Fatal(err)
			}
			live, _ := json.Marshal(p.Doc())
			code, stdout, stderr := runCmd("plan", "--capture", path, "--format", "json")
			if code != 0 {
				t.Fatalf("plan --capture: exit %d: %s", code, stderr)
			}
			want, got := placementOf(t, live), placementOf(t, []byte(stdout))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("plan --capture:\n%+v\nlive read:\n%+v", got, want)
			}
			if got.Allowed != "1-6" {
				t.Errorf("allowed %s, want 1-6: the capture's config bans 7 and its irqbalance file 0", got.Allowed)
			}
			if tc.nd != nil && !strings.Contains(got.IRQs[27], `queue 0 from "netlink"`) {
				t.Errorf("IRQ 27: %s; want queue 0 from netlink, as recorded", got.IRQs[27])
			}
		})
	}
}

// TestCaptureFlags: --capture with a root flag, or run without
// --dry-run, is bad usage; a damaged capture fails naming the file;
// topology reads the capture's; --config wins over the capture's;
// balance: load plans without loads, saying so once.
func TestCaptureFlags(t *testing.T) {
	tree, _, path := replayFixture(t, nil)
	for _, args := range [][]string{
		{"plan", "--capture", path, "--sysfs", tree.Sys()},
		{"plan", "--capture", path, "--etc", ""},
		{"topology", "--capture", path, "--sysfs", "/sys"},
		{"run", "--capture", path, "--oneshot"},
	} {
		if code, _, stderr := runCmd(args...); code != 2 || !strings.Contains(stderr, path) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the capture", args, code, stderr)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.tar.gz")
	if err := os.WriteFile(bad, []byte("not a capture\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"plan", "topology"} {
		if code, _, stderr := runCmd(cmd, "--capture", bad); code != 1 || !strings.Contains(stderr, bad) {
			t.Errorf("%s of a damaged capture: exit %d, stderr %q; want 1 naming the file", cmd, code, stderr)
		}
	}
	_, live, _ := runCmd("topology", "--sysfs", tree.Sys(), "--format", "json")
	if code, got, stderr := runCmd("topology", "--capture", path, "--format", "json"); code != 0 || got != live {
		t.Errorf("topology --capture: exit %d (%s), output\n%s\nwant\n%s", code, stderr, got, live)
	}
	code, stdout, stderr := runCmd("plan", "--capture", path, "--config", writeConfig(t, "balance: load\n"))
	if code != 0 || strings.Count(stderr, "planned without loads") != 1 || !strings.Contains(stdout, "Allowed CPUs: 1-7") {
		t.Errorf("plan --capture --config (balance: load): exit %d, stderr %q; want the flag's config (CPU 7 allowed) and one note\n%s", code, stderr, stdout)
	}
}

// TestRunCaptureServesStatus: a dry-run daemon over a capture serves
// /plan, /status and /metrics, `numairqd status --capture` reads it
// with the capture's rates, and SIGTERM stops it with the unpacked
// tree removed.
func TestRunCaptureServesStatus(t *testing.T) {
	_, _, path := replayFixture(t, nil)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	done := make(chan int, 1)
	var runErr string
	go func() {
		code, _, stderr := runCmd("run", "--dry-run", "--capture", path, "--listen", addr, "--log.format", "json", "--reload-status", "")
		runErr = stderr
		done <- code
	}()
	var code int
	var stdout, stderr string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if code, stdout, stderr = runCmd("status", "--capture", path, "--listen", addr, "--format", "json", "--interval", "100ms"); code == 0 {
			break
		}
	}
	var f frame
	if err := json.Unmarshal([]byte(stdout), &f); code != 0 || err != nil || f.Status == nil || f.Plan == nil {
		t.Fatalf("status: exit %d, %v: %s", code, err, stderr)
	}
	if !f.Status.DryRun || f.Status.Allowed != "1-6" || len(f.Plan.Devices) != 2 {
		t.Errorf("status: dry_run %v, allowed %s, %d devices; want a dry run allowing 1-6 with 2 devices", f.Status.DryRun, f.Status.Allowed, len(f.Plan.Devices))
	}
	// The capture's /proc: its IRQs, never firing.
	if r := f.Rates; r == nil || r.Error != "" || len(r.CPUs) != 8 || !zeroRate(r.IRQs, "25") || !zeroRate(r.IRQs, "41") {
		t.Errorf("status rates %+v; want the capture's 8 CPUs and IRQs, all at zero", r)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if !strings.Contains(string(body), "numairqd_build_info") {
		t.Errorf("/metrics lacks numairqd_build_info:\n%.500s", body)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("after SIGTERM: exit %d: %s", code, runErr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the daemon did not stop on SIGTERM")
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR after SIGTERM: %v", left)
	}
}

// zeroRate reports whether irqs has IRQ irq, at zero.
func zeroRate(irqs map[string]float64, irq string) bool {
	v, ok := irqs[irq]
	return ok && v == 0
}

// TestPlanInterrupted: SIGINT ends plan at once, with status 130 and
// nothing printed, through its deferred cleanup, as when it holds an
// unpacked capture; here it interrupts the load sampling.
func TestPlanInterrupted(t *testing.T) {
	caught := make(chan os.Signal, 1) // SIGINT must not end the test binary
	signal.Notify(caught, syscall.SIGINT)
	defer signal.Stop(caught)
	tree := planFixture(t)
	writeStat(tree)
	done := make(chan int, 1)
	var stdout, stderr string
	go func() {
		var code int
		code, stdout, stderr = runCmd("plan", "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "",
			"--config", writeConfig(t, "balance: load\n"), "--load-sample", "60s")
		done <- code
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.After(20 * time.Second); ; {
		select {
		case code := <-done:
			if code != 130 || stdout != "" {
				t.Errorf("interrupted plan: exit %d, stdout %q, stderr %q; want 130 and nothing", code, stdout, stderr)
			}
			return
		case <-tick.C:
			syscall.Kill(os.Getpid(), syscall.SIGINT) // until plan has caught one
		case <-deadline:
			t.Fatal("plan did not end on SIGINT")
		}
	}
}

// TestReadmeTryIt: the README's first example is what plan prints for
// that capture, line by line ("..." lines and cut tails aside).
func TestReadmeTryIt(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, _ := strings.Cut(string(readme), "## Try it\n")
	cmdLine := "go run ./cmd/numairqd plan --capture "
	_, rest, ok := strings.Cut(sec, cmdLine)
	file, rest, _ := strings.Cut(rest, "\n")
	_, block, _ := strings.Cut(rest, "```\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok || block == "" {
		t.Fatalf("README: no %q with an output block under \"## Try it\"", cmdLine)
	}
	var stdout, stderr strings.Builder
	if code := run([]string{"plan", "--capture", filepath.Join("../..", file)}, &stdout, &stderr); code != 0 {
		t.Fatalf("plan --capture %s: exit %d: %s", file, code, stderr.String())
	}
	out := stdout.String()
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		line = strings.TrimSuffix(strings.TrimSpace(line), "...")
		if line != "" && !strings.Contains(out, line) {
			t.Errorf("README shows %q, plan prints no such line", line)
		}
	}
}
