//go:build e2e

package e2e

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

//go:embed guest/init.sh
var initScript []byte

//go:embed guest/lib.sh
var libScript []byte

//go:embed guest/systemd.sh
var systemdStage2 []byte

// Scenario is one boot: a guest, a script run inside it, and host-side
// checks on what the script reported.
type Scenario struct {
	// Name appears in every marker line; no spaces.
	Name  string
	Guest Guest
	// Script is sourced by /init (busybox sh) after the modules are
	// loaded and the devices have probed, with the helpers of
	// guest/lib.sh (result, pass, fail, metric, check, expect_eq, data,
	// wait_for, uptime_s). /bin holds guestcheck and, when
	// ./cmd/numairqd builds, numairqd. Its exit status is reported.
	Script string
	// Files are extra guest files (path -> content, mode 0755).
	Files map[string][]byte
	// HostBins are host programs (absolute paths) to put into the guest
	// at the same paths with their shared libraries, besides ethtool,
	// which every guest gets.
	HostBins []string
	// Timeout bounds the whole boot; zero means DefaultTimeout.
	Timeout time.Duration
	// Expect names checks the guest must report; a missing one fails.
	Expect []string
	// Verify runs host-side checks on the result, if the guest finished.
	Verify func(t *testing.T, r *Result)
	// Root, if set, is a Debian root filesystem on a virtio disk (its
	// cached image, attached with snapshot=on): once the modules are
	// loaded and the devices have probed, /init copies /e2e, busybox and
	// guestcheck into it (/e2e/bin) and hands over to its systemd, whose
	// e2e.service runs Script through guest/systemd.sh.
	Root *DebianRoot
}

// DefaultTimeout bounds one boot; E2E_BOOT_TIMEOUT (a Go duration)
// overrides it.
var DefaultTimeout = 120 * time.Second

// modulesGuard is how many seconds /init lets module loading take
// before it reports a stall and powers off (retryReason);
// E2E_MODULES_S overrides it.
func modulesGuard() int {
	if n, err := strconv.Atoi(os.Getenv("E2E_MODULES_S")); err == nil && n > 0 {
		return n
	}
	return 60
}

// Result is what one boot reported.
type Result struct {
	Scenario Scenario
	Console  string // serial console (ttyS0)
	Port     string // data port (ttyS1)
	Checks   []Check
	Metrics  []Metric
	Traffic  []Traffic // the generator runs the guest asked for
	// Links are the boot's namespace's interfaces after the boot, with
	// their counters: only lo and the taps.
	Links []NetLink
	data  map[string]Data
	RC    int // exit status of the scenario script
	Wall  time.Duration
	t     *testing.T
	root  string // the root disk image, if Scenario.Root
}

// Data returns the output of the guest's `data NAME ...` call.
func (r *Result) Data(name string) (Data, bool) {
	d, ok := r.data[name]
	return d, ok
}

// GuestState decodes a `data NAME guestcheck state` call.
func (r *Result) GuestState(name string) (guestinfo.State, error) {
	var s guestinfo.State
	d, ok := r.data[name]
	if !ok {
		return s, fmt.Errorf("guest sent no data %q", name)
	}
	if d.RC != 0 {
		return s, fmt.Errorf("data %q: exit status %d: %s", name, d.RC, d.Output)
	}
	if err := json.Unmarshal(d.Output, &s); err != nil {
		return s, fmt.Errorf("data %q: %w", name, err)
	}
	return s, nil
}

// Check reports a host-side check in the same form as the guest's:
// logged when it passes, an error when it fails.
func (r *Result) Check(name string, ok bool, format string, args ...any) bool {
	r.t.Helper()
	st := "PASS"
	if !ok {
		st = "FAIL"
	}
	r.report(Check{Name: name, Status: st, Detail: fmt.Sprintf(format, args...)})
	return ok
}

func (r *Result) report(c Check) {
	r.t.Helper()
	r.Checks = append(r.Checks, c)
	line := fmt.Sprintf("E2E-RESULT %s %s %s %s", r.Scenario.Name, c.Name, c.Status, c.Detail)
	if c.Status == "FAIL" {
		r.t.Error(line)
	} else {
		r.t.Log(line)
	}
}

// Metric records and logs a figure.
func (r *Result) Metric(name string, value any) {
	r.t.Helper()
	m := Metric{Name: name, Value: fmt.Sprint(value)}
	if f, ok := value.(float64); ok {
		m.Value = strconv.FormatFloat(f, 'f', 3, 64)
	}
	r.Metrics = append(r.Metrics, m)
	r.t.Logf("E2E-METRIC %s %s %s", r.Scenario.Name, m.Name, m.Value)
}

// tail returns the last n lines of the console.
func (r *Result) tail(n int) string {
	lines := strings.Split(strings.ReplaceAll(r.Console, "\r", ""), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Run boots s.Guest, runs s.Script and reports every check and metric
// through t. It fails t on a timeout, a kernel panic, a missing
// E2E-END or expected check, or a FAIL check; it returns the Result
// for further host-side checks.
func Run(t *testing.T, s Scenario) *Result {
	t.Helper()
	env := requireEnv(t)
	if err := s.Guest.Validate(); err != nil {
		t.Fatalf("scenario %s: %v", s.Name, err)
	}
	r := &Result{Scenario: s, t: t, data: map[string]Data{}, RC: -1}
	dir := t.TempDir()
	bins := buildBinaries(t)

	if s.Root != nil {
		r.root = s.Root.Image(t)
	}

	// The initramfs.
	start := time.Now()
	initrd := filepath.Join(dir, "initramfs.cpio.gz")
	if err := writeInitramfs(env, s, bins.guest, initrd); err != nil {
		t.Fatalf("build initramfs: %v", err)
	}
	r.Metric("host_initramfs_build_s", time.Since(start).Seconds())
	if fi, err := os.Stat(initrd); err == nil {
		r.Metric("host_initramfs_bytes", fi.Size())
	}

	// Devices (the NICs' taps are made per boot, in its namespace).
	var images []string
	for i, d := range s.Guest.NVMe {
		img := filepath.Join(dir, fmt.Sprintf("nvme%d.img", i))
		size := d.SizeMB
		if size == 0 {
			size = 8
		}
		if err := os.WriteFile(img, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(img, int64(size)<<20); err != nil {
			t.Fatal(err)
		}
		images = append(images, img)
	}

	// Boot, and boot once more if QEMU itself failed (retryReason).
	timeout := s.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
		if v, err := time.ParseDuration(os.Getenv("E2E_BOOT_TIMEOUT")); err == nil {
			timeout = v
		}
	}
	var (
		boot bootResult
		m    markers
	)
	for attempt := 1; ; attempt++ {
		boot, m = r.boot(env, dir, initrd, images, bins.trafficgen, timeout)
		reason := retryReason(boot, m)
		if reason == "" || attempt == 2 {
			break
		}
		t.Logf("E2E-RETRY %s: %s; booting once more (a QEMU failure, not a test result)\n--- serial console, last 20 lines ---\n%s",
			s.Name, reason, r.tail(20))
		r.Metric("host_boot_retries", 1)
	}
	r.data = m.Data
	r.RC = m.RC
	for _, mt := range m.Metrics {
		r.Metric(mt.Name, mt.Value)
	}
	for _, c := range m.Checks {
		r.report(c)
	}
	for _, l := range m.Malformed {
		t.Errorf("malformed marker: %.300s", l)
	}
	for i, tr := range r.Traffic {
		if tr.Err != "" {
			t.Errorf("traffic %d (%s): %s", i, tr.Request, tr.Err)
		}
		r.Metric(fmt.Sprintf("host_traffic%d_frames_sent", i), tr.FramesSent())
	}

	fatal := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("scenario %s: %s\n--- serial console, last 60 lines ---\n%s", s.Name, fmt.Sprintf(format, args...), r.tail(60))
	}
	switch {
	case boot.timedOut:
		fatal("no power-off within %v (killed qemu)", timeout)
	case strings.Contains(r.Console, "Kernel panic"):
		fatal("kernel panic")
	case boot.err != nil && !m.Ended:
		fatal("qemu: %v", boot.err)
	case !m.Begun:
		fatal("no E2E-BEGIN marker: /init did not run")
	case !m.Ended:
		fatal("no E2E-END marker")
	}
	if m.RC != 0 {
		t.Errorf("scenario %s: script exit status %d\n--- serial console, last 40 lines ---\n%s", s.Name, m.RC, r.tail(40))
	}
	have := map[string]bool{}
	for _, c := range m.Checks {
		have[c.Name] = true
	}
	for _, e := range s.Expect {
		if !have[e] {
			t.Errorf("scenario %s: guest reported no check %q", s.Name, e)
		}
	}
	if s.Verify != nil {
		s.Verify(t, r)
	}
	return r
}

// boot runs QEMU once on the prepared initramfs and images, in a new
// network namespace with the NICs' taps, with trafficgen answering the
// guest's traffic requests, and returns what it did and the markers the
// guest printed; r keeps the serial logs, the traffic runs and the
// namespace's link counters of this boot (a retry starts afresh).
func (r *Result) boot(env hostEnv, dir, initrd string, images []string, trafficgen string, timeout time.Duration) (bootResult, markers) {
	t := r.t
	net := newLabNet(t, r.Scenario.Guest.Net)
	port := filepath.Join(dir, "port.log")
	_ = os.Remove(port)
	args := []string{
		"-machine", "q35,accel=tcg", "-cpu", "qemu64",
		"-nographic", "-no-reboot", "-vga", "none",
		"-kernel", bootKernel(t, env), "-initrd", initrd,
		"-append", strings.TrimSpace("console=ttyS0 panic=-1 quiet loglevel=3 rdinit=/init " + os.Getenv("E2E_KERNEL_ARGS")),
		// ttyS0 is the console on stdio (with the monitor, as
		// -nographic would), ttyS1 the data port.
		"-serial", "mon:stdio", "-serial", "file:" + port,
	}
	args = append(args, r.Scenario.Guest.qemuArgs(net.taps, images)...)
	if r.root != "" {
		// One queue: its IRQ is managed, like NVMe's, so it moves no
		// placement the scenarios expect.
		args = append(args, "-drive", "if=none,id=root,format=raw,snapshot=on,file="+r.root,
			"-device", "virtio-blk-pci,drive=root,num-queues=1,bus=pcie.0")
	}
	// For experiments: E2E_QEMU_ARGS="-bios /usr/share/qemu/qboot.rom".
	args = append(args, strings.Fields(os.Getenv("E2E_QEMU_ARGS"))...)
	t.Logf("ip netns exec %s qemu-system-x86_64 %s", net.name, strings.Join(args, " "))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	traffic := &trafficSource{ctx: ctx, net: net, guest: r.Scenario.Guest, bin: trafficgen, name: r.Scenario.Name}
	boot := runQEMU(ctx, net.command(ctx, env.qemu, args...), traffic.request)
	cancel() // ends any generator still running
	r.Traffic = traffic.wait()
	var err error
	if r.Links, err = net.links(); err != nil {
		t.Error(err)
	}
	r.Console = boot.console
	r.Wall = boot.wall
	r.Port = ""
	if b, err := os.ReadFile(port); err == nil {
		r.Port = string(b)
	}
	keepLogs(t, r)
	r.Metric("host_qemu_wall_s", boot.wall.Seconds())
	if boot.beginAt > 0 {
		r.Metric("host_boot_to_init_s", boot.beginAt.Seconds())
	}
	// Markers: the data port is clean; fall back to the console if the
	// guest could not open it.
	m := parseMarkers(r.Port, r.Scenario.Name)
	if !m.Begun {
		t.Logf("no E2E-BEGIN on the data port; parsing the console")
		m = parseMarkers(r.Console, r.Scenario.Name)
	}
	return boot, m
}

// retryReason says why a boot failed for QEMU's or the guest kernel's
// own reasons and is worth one more, or "" when its result stands.
// QEMU 7.2 under TCG has been seen to die on SIGSEGV, and a 6.12 guest
// to hang in insmod nvme, before numairqd ran (docs/qemu-lab.md §2).
// A boot whose guest reported a failed check is never retried, so a
// placement failure cannot turn into a pass; neither is one that
// reached E2E-END, whose results are complete, nor one that timed out
// after its modules were loaded, in the scenario.
func retryReason(b bootResult, m markers) string {
	for _, c := range m.Checks {
		if c.Status == "FAIL" {
			return ""
		}
	}
	loaded := slices.ContainsFunc(m.Metrics, func(mt Metric) bool { return mt.Name == "guest_modules_loaded_uptime_s" })
	// The guard powers the guest off once it fires, even if the last
	// insmod returns after that.
	stalled := slices.ContainsFunc(m.Metrics, func(mt Metric) bool { return mt.Name == "guest_stalled_uptime_s" }) ||
		strings.Contains(b.console, "E2E-METRIC guest_stalled_uptime_s ")
	switch {
	case m.Ended:
		return ""
	case b.signal != 0 && !b.timedOut:
		return fmt.Sprintf("qemu was killed by signal %d (%v) before E2E-END", int(b.signal), b.signal)
	case !m.Begun:
		return "the guest never printed E2E-BEGIN"
	case stalled:
		return "the guest's modules were not loaded within init.sh's guard"
	case b.timedOut && !loaded:
		return "the guest timed out before its modules were loaded"
	}
	return ""
}

// writeInitramfs builds s's initramfs at dst: busybox, the guest
// binaries, the modules s.Guest needs, /init, lib.sh, the scenario and
// /e2e/config, which tells /init what to load and wait for.
func writeInitramfs(env hostEnv, s Scenario, bins map[string]string, dst string) error {
	mods, rootDev := s.Guest.Modules(), ""
	if s.Root != nil {
		// ext4 asks for crc32c, which busybox's insmod cannot autoload.
		mods, rootDev = append(mods, "virtio_pci", "virtio_blk", "crc32c_generic", "ext4"), "/dev/vda"
	}
	order, err := moduleOrder(env.modDir, mods)
	if err != nil {
		return err
	}
	var names, netPCI, nvmePCI []string
	for _, m := range order {
		names = append(names, moduleName(m))
	}
	for i := range s.Guest.Net {
		netPCI = append(netPCI, s.Guest.NetAddress(i))
	}
	for i := range s.Guest.NVMe {
		nvmePCI = append(nvmePCI, s.Guest.NVMeAddress(i))
	}
	files := map[string][]byte{
		"/init":            initScript,
		"/e2e/lib.sh":      libScript,
		"/e2e/scenario.sh": []byte(s.Script),
		"/e2e/config": fmt.Appendf(nil, "E2E_SCENARIO=%s\nE2E_MODULES=%q\nE2E_NET_PCI=%q\nE2E_NVME_PCI=%q\nE2E_ROOT=%q\nE2E_MODULES_S=%d\n",
			s.Name, strings.Join(names, " "), strings.Join(netPCI, " "), strings.Join(nvmePCI, " "), rootDev, modulesGuard()),
	}
	if s.Root != nil {
		files["/e2e/systemd.sh"] = systemdStage2
	}
	for p, b := range s.Files {
		files[p] = b
	}
	ir := initramfs{Busybox: env.busybox, ModDir: env.modDir, Modules: order, Bins: bins, HostBins: append([]string{env.ethtool}, s.HostBins...), Files: files}
	return ir.write(dst)
}

// keepLogs copies the serial logs to $E2E_LOG_DIR, if set, so CI can
// keep them.
func keepLogs(t *testing.T, r *Result) {
	dir := os.Getenv("E2E_LOG_DIR")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("E2E_LOG_DIR: %v", err)
		return
	}
	base := strings.ReplaceAll(t.Name(), "/", "_")
	_ = os.WriteFile(filepath.Join(dir, base+".console.log"), []byte(r.Console), 0o644)
	_ = os.WriteFile(filepath.Join(dir, base+".port.log"), []byte(r.Port), 0o644)
}

type bootResult struct {
	console  string
	wall     time.Duration
	beginAt  time.Duration // when E2E-BEGIN appeared on the console
	timedOut bool
	signal   syscall.Signal // the signal qemu died of, 0 if it exited
	err      error
}

// runQEMU runs the qemu command until it exits (the guest powers off or
// panics with -no-reboot) or until ctx's deadline, when it is killed;
// onLine sees every console line as it arrives.
func runQEMU(ctx context.Context, cmd *exec.Cmd, onLine func(string)) bootResult {
	cmd.WaitDelay = 5 * time.Second
	w := &consoleWriter{start: time.Now(), onLine: onLine}
	cmd.Stdout, cmd.Stderr = w, w
	err := cmd.Run()
	res := bootResult{console: w.String(), wall: time.Since(w.start), beginAt: w.beginAt, err: err}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		res.timedOut = true
	}
	if cmd.ProcessState != nil {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.signal = ws.Signal()
		}
	}
	return res
}

// consoleWriter collects qemu's output, notes when /init started and
// passes each complete line to onLine.
type consoleWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	start   time.Time
	beginAt time.Duration
	onLine  func(string)
	lineAt  int // where the first line not yet passed to onLine starts
}

func (w *consoleWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.beginAt == 0 && bytes.Contains(w.buf.Bytes(), []byte("E2E-BEGIN")) {
		w.beginAt = time.Since(w.start)
	}
	for {
		i := bytes.IndexByte(w.buf.Bytes()[w.lineAt:], '\n')
		if i < 0 {
			break
		}
		if w.onLine != nil {
			w.onLine(string(w.buf.Bytes()[w.lineAt : w.lineAt+i]))
		}
		w.lineAt += i + 1
	}
	return len(p), nil
}

func (w *consoleWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
