package daemon

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/api"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is the e2e guest's shape (fakesys.QEMUGuest): 4 nodes of 2
// CPUs, a virtio-net with 6 queue pairs on node 2 (IRQs 24-36) and an
// NVMe on node 1 whose queue IRQs 41-48 are managed.
func fixture(t *testing.T) *fakesys.Tree {
	t.Helper()
	tree := fakesys.New(t)
	tree.AddMachine(fakesys.QEMUGuest())
	tree.AddQEMUGuestDevices()
	return tree
}

// fileWriter writes smp_affinity_list as procfs would (the whole file
// replaced; a regular file without O_TRUNC would keep a stale tail), and
// can fail chosen IRQs with an errno.
type fileWriter struct {
	proc string
	mu   sync.Mutex
	fail map[int]syscall.Errno
	n    int
	pins int
}

func (w *fileWriter) WriteAffinity(irq int, m cpumask.Mask) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if errno, ok := w.fail[irq]; ok {
		return errno
	}
	w.n++
	return os.WriteFile(filepath.Join(w.proc, "irq", strconv.Itoa(irq), "smp_affinity_list"), []byte(m.String()+"\n"), 0o644)
}

// WriteXPS writes xps_cpus in the tree's sys beside proc, not counted
// in writes.
func (w *fileWriter) WriteXPS(iface string, queue int, m cpumask.Mask) error {
	path := filepath.Join(filepath.Dir(w.proc), "sys", "class", "net", iface, "queues", "tx-"+strconv.Itoa(queue), "xps_cpus")
	return os.WriteFile(path, []byte(m.Hex(0)+"\n"), 0o644)
}

// PinThread rewrites the thread's status in the tree's proc, counted
// in pins.
func (w *fileWriter) PinThread(pid int, _ string, m cpumask.Mask) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pins++
	return fakesys.PinThread(w.proc, pid, m)
}

func (w *fileWriter) writes() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

func affinity(t *testing.T, tree *fakesys.Tree, irq int) string {
	t.Helper()
	b, err := os.ReadFile(tree.Path("proc/irq/" + strconv.Itoa(irq) + "/smp_affinity_list"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newDaemon(t *testing.T, tree *fakesys.Tree, w *fileWriter, cfgPath string, mutate func(*Options)) *Daemon {
	t.Helper()
	opts := Options{Sysfs: tree.Sys(), Procfs: tree.Proc(), ConfigPath: cfgPath, Writer: w, Log: zap.NewNop()}
	if mutate != nil {
		mutate(&opts)
	}
	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// node2Spread is where queue i of the NIC must be: node 2's spread.
var node2Spread = []string{"4", "5", "6", "7", "0", "1"}

func TestRoundPlacesAndIsIdempotent(t *testing.T) {
	tree := fixture(t)
	w := &fileWriter{proc: tree.Proc()}
	d := newDaemon(t, tree, w, "", nil)
	st, err := d.Round(context.Background(), "startup", inventory.DepthAll, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	res := st.Apply
	// 12 queue IRQs + config; the NVMe admin IRQ is already on its
	// node's CPUs and the managed queues are untouched.
	if res.Written != 13 || w.writes() != 13 {
		t.Errorf("first round wrote %d (writer saw %d), want 13", res.Written, w.writes())
	}
	for q := range 6 {
		for _, irq := range []int{25 + 2*q, 26 + 2*q} {
			if got := affinity(t, tree, irq); got != node2Spread[q] {
				t.Errorf("IRQ %d (queue %d) on %s, want %s", irq, q, got, node2Spread[q])
			}
		}
	}
	if got := affinity(t, tree, 41); got != "0" {
		t.Errorf("managed IRQ 41 changed to %s", got)
	}
	st2, err := d.Round(context.Background(), "resync", inventory.DepthAll, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if st2.Apply.Written != 0 || w.writes() != 13 {
		t.Errorf("second round wrote %d, want 0", st2.Apply.Written)
	}
	if got := d.State(); got != st2 || got.Generation != 2 || st.Generation != 1 || got.Trigger != "resync" {
		t.Errorf("published %+v, want the second round's state, generation 2", got)
	}
}

// TestRoundLogsItsPhases: "round done" splits the time into read, plan
// and apply, which is how a slow round in the e2e guest is explained.
func TestRoundLogsItsPhases(t *testing.T) {
	tree := fixture(t)
	core, logs := observer.New(zap.InfoLevel)
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, "", func(o *Options) { o.Log = zap.New(core) })
	st, err := d.Round(context.Background(), "startup", inventory.DepthAll, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Machine.Took <= 0 || st.Planning <= 0 || st.Applying <= 0 {
		t.Errorf("phases read %v, plan %v, apply %v", st.Machine.Took, st.Planning, st.Applying)
	}
	done := logs.FilterMessage("round done").All()
	if len(done) != 1 {
		t.Fatalf("%d 'round done' lines, want 1", len(done))
	}
	f := done[0].ContextMap()
	for _, k := range []string{"took", "read", "plan", "apply"} {
		if v, ok := f[k].(time.Duration); !ok || v <= 0 {
			t.Errorf("round done: %s = %v, want a positive duration", k, f[k])
		}
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	tree := fixture(t)
	w := &fileWriter{proc: tree.Proc()}
	d := newDaemon(t, tree, w, "", func(o *Options) { o.DryRun = true })
	st, err := d.Round(context.Background(), "startup", inventory.DepthAll, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	res := st
	if res.Apply.DryRun != 13 || res.Apply.Written != 0 || w.writes() != 0 || affinity(t, tree, 25) != "0-7" {
		t.Errorf("dry run: %+v, writer saw %d", res.Apply, w.writes())
	}
}

func TestReloadBadConfigKeepsOld(t *testing.T) {
	tree := fixture(t)
	path := filepath.Join(t.TempDir(), "numairqd.yaml")
	writeFile(t, path, "banned_cpus: 4\n")
	core, logs := observer.New(zap.InfoLevel)
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, path, func(o *Options) { o.Log = zap.New(core) })
	writeFile(t, path, "banned_cpus: 4\ndevices:\n  - match: {driver: nvme}\n    policy: sometimes\n")
	err := d.Reload()
	if err == nil || !strings.Contains(err.Error(), path+":4") {
		t.Fatalf("Reload error = %v, want one naming %s:4", err, path)
	}
	if got := d.Config().BannedCPUs.String(); got != "4" {
		t.Errorf("config after a bad reload: banned %q, want the old 4", got)
	}
	if logs.FilterMessage("config rejected, keeping the previous one").Len() != 1 {
		t.Errorf("no rejection logged: %v", logs.All())
	}
	if _, why, ok := d.Metrics().Rejected(); !ok || why != err.Error() {
		t.Errorf("rejection recorded for /status: %v %q, want %q", ok, why, err)
	}
	writeFile(t, path, "banned_cpus: 5\n")
	if err := d.Reload(); err != nil || d.Config().BannedCPUs.String() != "5" {
		t.Errorf("good reload: %v, banned %s", err, d.Config().BannedCPUs)
	}
	if _, why, ok := d.Metrics().Rejected(); ok {
		t.Errorf("a good reload left the rejection for /status: %q", why)
	}
}

func TestOneshotReportsUnplacedIRQs(t *testing.T) {
	tree := fixture(t)
	w := &fileWriter{proc: tree.Proc(), fail: map[int]syscall.Errno{25: syscall.EBUSY}}
	d := newDaemon(t, tree, w, "", nil)
	err := d.Oneshot(context.Background())
	if err == nil || !strings.Contains(err.Error(), "1 IRQs could not be placed") {
		t.Errorf("Oneshot = %v", err)
	}
	// EIO is the kernel refusing a managed IRQ: not a failure.
	w.fail = map[int]syscall.Errno{25: syscall.EIO}
	if err := newDaemon(t, tree, w, "", nil).Oneshot(context.Background()); err != nil {
		t.Errorf("Oneshot with a managed IRQ = %v", err)
	}
}

// TestOneshotFailsWithoutAllowedCPU: with every CPU banned nothing can
// be placed, and oneshot says so (exit status 1 in the command) instead
// of succeeding silently; nothing is written, and the IRQs count as
// failed in numairqd_irqs.
func TestOneshotFailsWithoutAllowedCPU(t *testing.T) {
	tree := fixture(t)
	path := filepath.Join(t.TempDir(), "numairqd.yaml")
	writeFile(t, path, "banned_cpus: \"0-7\"\n")
	w := &fileWriter{proc: tree.Proc()}
	core, logs := observer.New(zap.WarnLevel)
	d := newDaemon(t, tree, w, path, func(o *Options) { o.Log = zap.New(core) })
	err := d.Oneshot(context.Background())
	if err == nil || !strings.Contains(err.Error(), "IRQs could not be placed (IRQ ") || !strings.Contains(err.Error(), "no allowed CPU") {
		t.Fatalf("Oneshot = %v, want no allowed CPU", err)
	}
	if w.writes() != 0 {
		t.Errorf("%d writes with every CPU banned", w.writes())
	}
	if logs.FilterMessageSnippet("could not be placed").Len() != 1 {
		t.Errorf("no warning about the IRQs without a CPU: %v", logs.All())
	}
	if len(d.State().Plan.Unplaced()) == 0 {
		t.Error("plan has no IRQ marked NoCPU")
	}
}

// TestRunRefusesATakenAddress: a second daemon on the same metrics
// address stops at once, before writing anything, instead of running
// without HTTP next to the first.
func TestRunRefusesATakenAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tree := fixture(t)
	w := &fileWriter{proc: tree.Proc()}
	d := newDaemon(t, tree, w, "", func(o *Options) { o.Listen = ln.Addr().String() })
	err = d.Run(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Fatalf("Run on a taken address = %v, want an error naming it", err)
	}
	if w.writes() != 0 || d.State() != nil {
		t.Errorf("Run wrote %d affinities before failing", w.writes())
	}
}

// recorder is a Notifier that keeps every state sent.
type recorder struct {
	mu     sync.Mutex
	states []string
	ch     chan string
}

func newRecorder() *recorder { return &recorder{ch: make(chan string, 100)} }

func (r *recorder) Notify(s string) {
	r.mu.Lock()
	r.states = append(r.states, s)
	r.mu.Unlock()
	select {
	case r.ch <- s:
	default: // nobody waits for states now; states keeps them all
	}
}

// waitFor waits for a state starting with prefix.
func (r *recorder) waitFor(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case s := <-r.ch:
			if strings.HasPrefix(s, prefix) {
				return s
			}
		case <-timeout:
			t.Fatalf("no %q notification; got %q", prefix, r.states)
			return ""
		}
	}
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestRunReloadRestoreAndStop runs the loop: READY after the first
// round, SIGHUP with a new banned_cpus moves the queues, a broken config
// is rejected and the old placement kept, a rename-replaced config file
// is picked up without SIGHUP, and on stop restore_on_exit puts the
// original affinities back; no goroutine outlives Run (TestMain).
func TestRunReloadRestoreAndStop(t *testing.T) {
	tree := fixture(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "numairqd.yaml")
	writeFile(t, path, "restore_on_exit: true\nlisten: \"127.0.0.1:0\"\n")
	rec := newRecorder()
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, path, func(o *Options) { o.Notify = rec })

	ctx, cancel := context.WithCancel(context.Background())
	hup := make(chan os.Signal, 1)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, hup) }()

	if s := rec.waitFor(t, "READY=1"); !strings.Contains(s, "STATUS=2 devices, 14 IRQs placed, 8 managed") {
		t.Errorf("READY notification %q lacks the round summary", s)
	}
	if got := affinity(t, tree, 25); got != "4" {
		t.Fatalf("queue 0 on %s after the first round, want 4", got)
	}

	writeFile(t, path+".new", "restore_on_exit: true\nlisten: \"127.0.0.1:0\"\nbanned_cpus: 4\n")
	hup <- syscall.SIGHUP
	if s := rec.waitFor(t, "RELOADING=1"); !strings.Contains(s, "MONOTONIC_USEC=") {
		t.Errorf("RELOADING without MONOTONIC_USEC: %q", s)
	}
	// The file watcher may pick up the rename too; either way the queues
	// must leave the banned CPUs.
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	// 6 queues on the 7 CPUs left: node 2's spread without CPU 4.
	eventually(t, "queues off banned CPU 4", func() bool { return affinity(t, tree, 25) == "5" })

	// A broken config (rename-replace, as editors do) is rejected; the
	// old placement stays.
	writeFile(t, path+".new", "banned_cpus: [oops\n")
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "READY=1\nSTATUS=config rejected")
	if got := d.Config().BannedCPUs.String(); got != "4" || affinity(t, tree, 25) != "5" {
		t.Errorf("after a broken config: banned %q, queue 0 on %s", got, affinity(t, tree, 25))
	}

	if got := counter(t, d, "numairqd_config_reloads_total", "result", "failure"); got != 1 {
		t.Errorf("config reload failures = %v, want 1", got)
	}
	if got := counter(t, d, "numairqd_rounds_total", "trigger", "startup"); got != 1 {
		t.Errorf("startup rounds = %v, want 1", got)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	rec.waitFor(t, "STOPPING=1")
	if got := affinity(t, tree, 25); got != "0-7" {
		t.Errorf("after stop with restore_on_exit, IRQ 25 on %s, want the original 0-7", got)
	}
}

// scrape returns the metric families the daemon's /metrics serves.
func scrape(t *testing.T, d *Daemon) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	api.New(d.Metrics()).Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	return mfs
}

// counter returns the value of the counter or gauge name{label=value}.
func counter(t *testing.T, d *Daemon, name, label, value string) float64 {
	t.Helper()
	for _, m := range scrape(t, d)[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label && l.GetValue() == value {
				if g := m.GetGauge(); g != nil {
					return g.GetValue()
				}
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no series %s{%s=%q}", name, label, value)
	return 0
}

// TestManagedFoundByWriteIsReplanned: on kernels before 6.12 a managed
// IRQ looks writable, so the first plan spreads other queues around it;
// when the write fails with EIO the daemon must re-plan at once, not at
// the next resync.
func TestManagedFoundByWriteIsReplanned(t *testing.T) {
	tree := fakesys.New(t)
	tree.AddMachine(fakesys.QEMUGuest())
	tree.AddQEMUGuestDevices()
	// A storage device on node 2 with two queues that look movable
	// (0644) but that the kernel refuses, like a 6.1 kernel's managed
	// IRQs of a driver numairqd does not know to be managed.
	tree.AddMSIXDevice(fakesys.PCIDevice{BDF: "0000:40:00.0", NUMANode: 2, Driver: "fooblk"},
		fakesys.IRQSpec{Number: 60, Name: "fooblk0-q1"}, fakesys.IRQSpec{Number: 61, Name: "fooblk0-q2"})
	w := &fileWriter{proc: tree.Proc(), fail: map[int]syscall.Errno{60: syscall.EIO, 61: syscall.EIO}}
	d := newDaemon(t, tree, w, "", nil)
	if err := d.Oneshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Without the re-plan the NIC's queues 0 and 1 would avoid CPUs 4
	// and 5, which the refused NVMe queues took in the first plan.
	for q, want := range node2Spread {
		if got := affinity(t, tree, 25+2*q); got != want {
			t.Errorf("queue %d on %s, want %s", q, got, want)
		}
	}
	if got := counter(t, d, "numairqd_rounds_total", "trigger", "stale"); got != 1 {
		t.Errorf("re-plan rounds = %v, want 1", got)
	}
}

// TestConfigSymlinkSwapReloads swaps the config the way a Kubernetes
// ConfigMap volume does: numairqd.yaml -> ..data/numairqd.yaml, and
// ..data is a symlink replaced atomically by a rename. No event names
// numairqd.yaml itself; the watcher must notice its target changed.
func TestConfigSymlinkSwapReloads(t *testing.T) {
	tree := fixture(t)
	dir := t.TempDir()
	for _, v := range []string{"v1", "v2"} {
		if err := os.Mkdir(filepath.Join(dir, v), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "v1", "numairqd.yaml"), "listen: \"\"\n")
	writeFile(t, filepath.Join(dir, "v2", "numairqd.yaml"), "listen: \"\"\nbanned_cpus: 4\n")
	if err := os.Symlink("v1", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "numairqd.yaml")
	if err := os.Symlink("..data/numairqd.yaml", path); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, path, func(o *Options) { o.Notify = rec })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	rec.waitFor(t, "READY=1")

	if err := os.Symlink("v2", filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the swapped-in config", func() bool { return d.Config().BannedCPUs.String() == "4" })
	eventually(t, "queue 0 off banned CPU 4", func() bool { return affinity(t, tree, 25) == "5" })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestReloadHostileConfigs: a config path that becomes a FIFO, or a
// symlink to /dev/zero, is rejected on SIGHUP without blocking or
// reading without end: the old config stays in force, rounds go on,
// and cancelling (SIGTERM in the command) stops Run within 5 s.
func TestReloadHostileConfigs(t *testing.T) {
	tree := fixture(t)
	path := filepath.Join(t.TempDir(), "numairqd.yaml")
	writeFile(t, path, "listen: \"\"\nresync_interval: 1s\nbanned_cpus: 7\n")
	rec := newRecorder()
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, path, func(o *Options) { o.Notify = rec })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hup := make(chan os.Signal, 1)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, hup) }()
	rec.waitFor(t, "READY=1")

	for _, hostile := range []struct {
		name string
		make func() error
	}{
		{"fifo", func() error { return syscall.Mkfifo(path, 0o644) }},
		{"/dev/zero", func() error { return os.Symlink("/dev/zero", path) }},
	} {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := hostile.make(); err != nil {
			t.Fatal(err)
		}
		hup <- syscall.SIGHUP
		if s := rec.waitFor(t, "READY=1\nSTATUS=config rejected"); !strings.Contains(s, path) {
			t.Errorf("%s: rejection %q does not name %s", hostile.name, s, path)
		}
		if got := d.Config().BannedCPUs.String(); got != "7" {
			t.Errorf("%s: banned_cpus %q after the rejected reload, want the old 7", hostile.name, got)
		}
		resyncs := counter(t, d, "numairqd_rounds_total", "trigger", "resync")
		eventually(t, hostile.name+": a resync round after the rejected reload", func() bool {
			return counter(t, d, "numairqd_rounds_total", "trigger", "resync") > resyncs
		})
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop within 5 s of cancel")
	}
}

// TestOneBadIRQFileDegradesOnlyThatIRQ: a garbage or unreadable
// /proc/irq/N file leaves IRQ N alone, counted failed and named in a
// warning; every other IRQ is placed in the same round.
func TestOneBadIRQFileDegradesOnlyThatIRQ(t *testing.T) {
	for name, corrupt := range map[string]func(tree *fakesys.Tree){
		"garbage": func(tree *fakesys.Tree) { tree.WriteFile("proc/irq/25/smp_affinity_list", "4-x\n") },
		"empty":   func(tree *fakesys.Tree) { tree.WriteFile("proc/irq/25/smp_affinity_list", "\n") },
		"fifo": func(tree *fakesys.Tree) {
			tree.Remove("proc/irq/25/smp_affinity_list")
			if err := syscall.Mkfifo(tree.Path("proc/irq/25/smp_affinity_list"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			tree := fixture(t)
			corrupt(tree)
			w := &fileWriter{proc: tree.Proc()}
			core, logs := observer.New(zap.WarnLevel)
			d := newDaemon(t, tree, w, "", func(o *Options) { o.Log = zap.New(core) })
			st, err := d.Round(context.Background(), "startup", inventory.DepthAll, time.Time{})
			if err != nil {
				t.Fatalf("Round failed on one IRQ's file: %v", err)
			}
			if st.Apply.Written != 12 || affinity(t, tree, 26) != "4" {
				t.Errorf("wrote %d (IRQ 26 on %s), want the 12 other IRQs placed, 26 on 4", st.Apply.Written, affinity(t, tree, 26))
			}
			warn := logs.FilterMessageSnippet("could not be placed").All()
			if len(warn) != 1 || !strings.Contains(fmt.Sprint(warn[0].ContextMap()["first"]), tree.Path("proc/irq/25/")) {
				t.Errorf("warnings %v do not name IRQ 25's file", logs.All())
			}
			var failed float64
			for _, m := range scrape(t, d)["numairqd_irqs"].GetMetric() {
				if m.GetLabel()[2].GetValue() == "failed" {
					failed += m.GetGauge().GetValue()
				}
			}
			if failed != 1 {
				t.Errorf("numairqd_irqs{state=failed} = %v, want 1", failed)
			}
			if err := d.Oneshot(context.Background()); err == nil || !strings.Contains(err.Error(), "IRQ 25") {
				t.Errorf("Oneshot = %v, want IRQ 25 reported unplaced", err)
			}
		})
	}
}

// TestEnvFileWriteRebans: a cri-o-style write of irqbalance's
// environment file moves the queue IRQs off the banned CPUs without a
// reload or a restart, and clearing it brings the plan back.
func TestEnvFileWriteRebans(t *testing.T) {
	tree := fixture(t)
	etc := t.TempDir()
	if err := os.Mkdir(filepath.Join(etc, "default"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "numairqd.yaml")
	writeFile(t, cfg, "listen: \"\"\n")
	rec := newRecorder()
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, cfg, func(o *Options) { o.Notify, o.Etc = rec, etc })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	rec.waitFor(t, "READY=1")
	eventually(t, "queue 0 on CPU 4", func() bool { return affinity(t, tree, 25) == "4" })

	// cri-o: CPUs 4-5 for a pod, hex groups in the legacy variable.
	env := filepath.Join(etc, "default", "irqbalance")
	writeFile(t, env, "IRQBALANCE_BANNED_CPUS=\"00000000,00000030\"\n")
	eventually(t, "queues off CPUs 4-5", func() bool {
		for q := range 6 {
			if a := affinity(t, tree, 25+2*q); a == "4" || a == "5" {
				return false
			}
		}
		return true
	})
	// The writes come before the round is counted and published.
	eventually(t, "a round triggered by the file", func() bool {
		return counter(t, d, "numairqd_rounds_total", "trigger", "bans") >= 1
	})
	eventually(t, "2 CPUs banned by the env file", func() bool {
		return counter(t, d, "numairqd_banned_cpus", "source", "irqbalance_env") == 2
	})
	// PostStop: the variable emptied, the plan returns.
	writeFile(t, env, "IRQBALANCE_BANNED_CPUS=\n")
	eventually(t, "queue 0 back on CPU 4", func() bool { return affinity(t, tree, 25) == "4" })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
