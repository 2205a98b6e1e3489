package prometheus

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
)

// liveAlert is the shipped alert the live test makes true: the fixture's
// virtio-net IRQs are on all 8 CPUs, the config bans CPUs 6-7, and a dry
// run never moves them off.
const liveAlert = "NumairqdIRQsOnBannedCPUs"

// liveDeadline bounds the wait for firing: the rule's `for: 5m` is
// Prometheus's own clock, so about 5 minutes plus a few evaluations.
const liveDeadline = 9 * time.Minute

// TestPrometheusFiresShippedRule runs a real Prometheus (the binary
// NUMAIRQD_PROMETHEUS names; scripts/test.sh takes it from Debian's
// package with scripts/prometheus.sh) with numairqd.rules.yml loaded as
// shipped, scraping a dry-run numairqd process every second, and waits
// for liveAlert to go pending and then firing in /api/v1/alerts, with the
// target up and every rule loaded and healthy. Any other alert, pending
// or firing, fails the test: nothing else is wrong with the fixture.
func TestPrometheusFiresShippedRule(t *testing.T) {
	promBin := os.Getenv("NUMAIRQD_PROMETHEUS")
	if promBin == "" {
		t.Skip("NUMAIRQD_PROMETHEUS (a prometheus binary) is not set; scripts/test.sh sets it to what `scripts/prometheus.sh prometheus` prints. The test takes about 5 minutes: the rule's for: 5m")
	}
	metricsAddr, daemon := startDryRunDaemon(t)
	promAddr, prom := startPrometheus(t, promBin, metricsAddr)
	start := time.Now()
	api := "http://" + promAddr + "/api/v1/"

	waitFor(t, "Prometheus ready", 60*time.Second, func() (bool, string) {
		running(t, daemon, prom)
		_, err := get("http://" + promAddr + "/-/ready")
		return err == nil, fmt.Sprint(err)
	})
	checkRulesLoaded(t, api, false)
	waitFor(t, "target job=numairqd up", 30*time.Second, func() (bool, string) {
		return targetUp(t, api, metricsAddr)
	})
	t.Logf("Prometheus ready and scraping %s after %.1fs", metricsAddr, time.Since(start).Seconds())

	var pendingAfter time.Duration
	var fired promAlert
	waitFor(t, liveAlert+" firing", liveDeadline, func() (bool, string) {
		running(t, daemon, prom)
		alerts := activeAlerts(t, api)
		for _, a := range alerts {
			if a.Labels["alertname"] != liveAlert {
				t.Fatalf("%.0fs: alert %s is %s, and nothing in the fixture should make it true: %+v",
					time.Since(start).Seconds(), a.Labels["alertname"], a.State, a)
			}
			if pendingAfter == 0 && (a.State == "pending" || a.State == "firing") {
				pendingAfter = time.Since(start)
				t.Logf("%s pending after %.1fs (activeAt %s, value %s)", liveAlert, pendingAfter.Seconds(), a.ActiveAt, a.Value)
			}
			if a.State == "firing" {
				fired = a
				return true, ""
			}
		}
		// The test cannot pass without the target up all the way.
		if ok, why := targetUp(t, api, metricsAddr); !ok {
			t.Fatalf("%.0fs: %s", time.Since(start).Seconds(), why)
		}
		return false, fmt.Sprintf("alerts %+v", alerts)
	})
	firingAfter := time.Since(start)
	if ok, why := targetUp(t, api, metricsAddr); !ok {
		t.Fatal(why)
	}
	checkRulesLoaded(t, api, true)
	t.Logf("%s firing after %.1fs (pending after %.1fs; Prometheus started at 0s): labels %v, value %s, activeAt %s",
		liveAlert, firingAfter.Seconds(), pendingAfter.Seconds(), fired.Labels, fired.Value, fired.ActiveAt)
	if fired.Labels["job"] != "numairqd" || fired.Labels["managed"] != "false" || fired.Labels["severity"] != "warning" {
		t.Errorf("firing alert's labels %v, want job=numairqd, managed=false, severity=warning", fired.Labels)
	}
	if v, err := strconv.ParseFloat(fired.Value, 64); err != nil || v <= 0 {
		t.Errorf("firing alert's value %q, want the count of IRQs on banned CPUs (> 0)", fired.Value)
	}
	if firingAfter < 5*time.Minute {
		t.Errorf("firing after %v: before the rule's for: 5m", firingAfter)
	}
}

// startDryRunDaemon builds numairqd and runs `numairqd run --dry-run` as
// a process on a fixture tree: the e2e guest's 4 nodes and a virtio-net
// with 6 queue pairs whose 13 IRQs are on all 8 CPUs, with banned_cpus
// 6-7. It waits until /metrics shows unmanaged IRQs on banned CPUs and
// returns the metrics address.
func startDryRunDaemon(t *testing.T) (string, *process) {
	t.Helper()
	tree := fakesys.New(t)
	tree.AddMachine(fakesys.QEMUGuest())
	tree.AddInterrupts([]int{0, 1, 2, 3, 4, 5, 6, 7})
	tree.AddVirtioNet(fakesys.VirtioNet{BDF: "0000:41:00.0", Index: 0, Interface: "eth0", Pairs: 6, FirstIRQ: 24, NUMANode: 2})
	tree.Mkdir("etc") // no irqbalance environment file: the host's /etc is not read
	cfg := tree.Path("numairqd.yaml")
	if err := os.WriteFile(cfg, []byte("banned_cpus: \"6-7\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	bin := filepath.Join(t.TempDir(), "numairqd")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/numairqd").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	daemon := startProcess(t, "numairqd", bin, "run", "--dry-run", "--config", cfg,
		"--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", tree.Path("etc"),
		"--listen", addr, "--lock-file", "", "--reload-status", "", "--no-events", "--log.format", "json")

	banned := regexp.MustCompile(`(?m)^numairqd_irqs_on_banned_cpus\{managed="false"\} ([0-9.e+]+)$`)
	waitFor(t, "numairqd /metrics with IRQs on banned CPUs", 30*time.Second, func() (bool, string) {
		running(t, daemon)
		text, err := get("http://" + addr + "/metrics")
		if err != nil {
			return false, err.Error()
		}
		m := banned.FindStringSubmatch(text)
		if m == nil {
			return false, "no numairqd_irqs_on_banned_cpus{managed=\"false\"} sample"
		}
		if v, _ := strconv.ParseFloat(m[1], 64); v <= 0 {
			return false, m[0]
		}
		t.Logf("numairqd's /metrics: %s", m[0])
		return true, ""
	})
	return addr, daemon
}

// startPrometheus writes a prometheus.yml that scrapes the daemon every
// second with the shipped job (scrape.yml, its example target replaced
// by target), evaluates every second and loads the shipped rules file
// itself, starts prom on a free loopback port with its TSDB in a
// temporary directory, and returns its address.
func startPrometheus(t *testing.T, prom, target string) (string, *process) {
	t.Helper()
	rules, err := filepath.Abs("numairqd.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "prometheus.yml")
	yml := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - %q
`, rules) + scrapeJob(t, target)
	if err := os.WriteFile(conf, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	p := startProcess(t, "prometheus", prom, "--config.file="+conf, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	return addr, p
}

// A process is a daemon the test started; exited is closed when it ends,
// with its exit error in err.
type process struct {
	name   string
	exited chan struct{}
	err    error
}

// running fails the test if any of procs has ended: neither the daemon
// nor Prometheus may stop while the test watches them.
func running(t *testing.T, procs ...*process) {
	t.Helper()
	for _, p := range procs {
		select {
		case <-p.exited:
			t.Fatalf("%s exited early: %v", p.name, p.err)
		default:
		}
	}
}

// startProcess starts name, logging its output to a file that the test
// prints when it fails, and stops it when the test ends: SIGTERM, then
// SIGKILL after 10 s. Pdeathsig kills it if the test binary dies first.
func startProcess(t *testing.T, name, bin string, args ...string) *process {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("%s: %v", name, err)
	}
	p := &process{name: name, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		select {
		case <-p.exited: // running has reported it
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
				if p.err != nil {
					t.Errorf("%s exited after SIGTERM: %v", name, p.err)
				}
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-p.exited
				t.Errorf("%s did not exit within 10 s of SIGTERM: killed", name)
			}
		}
		logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("%s's output (last 4 KiB):\n%s", name, b[max(0, len(b)-4096):])
			}
		}
	})
	return p
}

// waitFor polls cond every second until it holds, failing the test with
// cond's last reason after timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v: %s", what, timeout, why)
		}
		time.Sleep(time.Second)
	}
}

// apiGet decodes the data of a Prometheus HTTP API answer into v.
func apiGet(t *testing.T, url string, v any) {
	t.Helper()
	text, err := get(url)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Status string
		Data   json.RawMessage
		Error  string
	}
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	if r.Status != "success" {
		t.Fatalf("%s: status %q: %s", url, r.Status, r.Error)
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("%s: data: %v", url, err)
	}
}

type promAlert struct {
	Labels   map[string]string
	State    string
	ActiveAt string `json:"activeAt"`
	Value    string
}

func activeAlerts(t *testing.T, api string) []promAlert {
	t.Helper()
	var d struct{ Alerts []promAlert }
	apiGet(t, api+"alerts", &d)
	return d.Alerts
}

// targetUp says whether the one active target is the daemon, as job
// numairqd, with health up.
func targetUp(t *testing.T, api, addr string) (bool, string) {
	t.Helper()
	var d struct {
		ActiveTargets []struct {
			Labels    map[string]string
			Health    string
			LastError string `json:"lastError"`
		} `json:"activeTargets"`
	}
	apiGet(t, api+"targets", &d)
	if len(d.ActiveTargets) != 1 {
		return false, fmt.Sprintf("%d active targets, want 1: %+v", len(d.ActiveTargets), d.ActiveTargets)
	}
	tg := d.ActiveTargets[0]
	if tg.Labels["job"] != "numairqd" || tg.Labels["instance"] != addr || tg.Health != "up" {
		return false, fmt.Sprintf("target %v health %q (%s), want job numairqd, instance %s, up", tg.Labels, tg.Health, tg.LastError, addr)
	}
	return true, ""
}

// checkRulesLoaded compares /api/v1/rules with numairqd.rules.yml: every
// group and alert of the file is loaded, none is unhealthy and, once
// evaluated, every one is healthy ("ok", not "unknown").
func checkRulesLoaded(t *testing.T, api string, evaluated bool) {
	t.Helper()
	var file struct {
		Groups []struct {
			Name  string
			Rules []struct{ Alert, Record string }
		}
	}
	readYAML(t, "numairqd.rules.yml", &file)
	var want []string
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			want = append(want, g.Name+"/"+r.Alert+r.Record)
		}
	}
	var d struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Name, Health string
				LastError    string `json:"lastError"`
			}
		}
	}
	apiGet(t, api+"rules", &d)
	var got []string
	for _, g := range d.Groups {
		for _, r := range g.Rules {
			got = append(got, g.Name+"/"+r.Name)
			if r.Health == "err" || r.LastError != "" || evaluated && r.Health != "ok" {
				t.Errorf("rule %s: health %q, %s", r.Name, r.Health, r.LastError)
			}
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("Prometheus loaded rules %v, want numairqd.rules.yml's %v", got, want)
	}
	if !evaluated {
		t.Logf("Prometheus loaded the %d rules of numairqd.rules.yml", len(got))
	}
}
