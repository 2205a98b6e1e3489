package main

import (
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestReloadWaitsForTheDaemon runs the daemon in this process (dry run,
// on a fixture) and `numairqd reload` against it: the command finds the
// dry run's pid without --pid (the dry run holds its own lock, not the
// writers'), returns 0 once the daemon has recorded a reload begun after
// the signal, and 1 naming the file and value when the new config is
// rejected.
func TestReloadWaitsForTheDaemon(t *testing.T) {
	catchSIGHUP()

	dir := t.TempDir()
	notify := listenNotify(t, filepath.Join(dir, "notify"))
	tree := planFixture(t)
	cfg := writeConfig(t, "")
	status := filepath.Join(dir, "run", "reload-status")
	lock := filepath.Join(dir, "run", "numairqd.lock")
	done := make(chan int, 1)
	go func() {
		code, _, _ := runCmd("run", "--dry-run", "--no-events", "--log.format", "json", "--lock-file", lock, "--listen", "127.0.0.1:0",
			"--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "", "--config", cfg, "--reload-status", status)
		done <- code
	}()
	notify.await(t, "READY=1")
	pid := strconv.Itoa(os.Getpid())
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("a dry run made the writers' lock %s: %v", lock, err)
	}

	if err := os.WriteFile(cfg, []byte("banned_cpus: \"1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd("reload", "--lock-file", lock, "--reload-status", status, "--timeout", "60s")
	if code != 0 || !strings.Contains(stdout, "numairqd pid "+pid+" reloaded its config and applied it") {
		t.Fatalf("reload: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	notify.await(t, "RELOADING=1")
	if b, err := os.ReadFile(status); err != nil || !strings.HasSuffix(string(b), " ok\n") {
		t.Errorf("status file after an accepted reload: %q, %v", b, err)
	}

	if err := os.WriteFile(cfg, []byte("resync_interval: soon\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd("reload", "--pid", pid, "--reload-status", status, "--timeout", "60s")
	if code != 1 || !strings.Contains(stderr, "rejected the config") || !strings.Contains(stderr, "soon") {
		t.Errorf("reload of a bad config: exit %d, stderr %q; want 1, naming the value", code, stderr)
	}

	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("daemon exit %d", code)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("daemon did not stop on SIGTERM")
	}
}

// TestReloadErrors: no daemon to signal, one that never records a
// reload, a status file that is not one, and bad usage, each a clear
// error and no wait beyond --timeout.
func TestReloadErrors(t *testing.T) {
	catchSIGHUP()
	dir := t.TempDir()
	status := filepath.Join(dir, "reload-status")

	lock := filepath.Join(dir, "numairqd.lock")
	if err := os.WriteFile(lock, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd("reload", "--lock-file", lock, "--reload-status", status); code != 1 || !strings.Contains(stderr, "nobody holds the lock "+lock) {
		t.Errorf("stale lock: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCmd("reload", "--lock-file", filepath.Join(dir, "none"), "--reload-status", status); code != 1 || !strings.Contains(stderr, "no running numairqd") {
		t.Errorf("no lock file: exit %d, stderr %q", code, stderr)
	}
	held, err := lockFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	// This process holds the lock and catches SIGHUP but records nothing.
	start := time.Now()
	if code, _, stderr := runCmd("reload", "--lock-file", lock, "--reload-status", status, "--timeout", "300ms"); code != 1 ||
		!strings.Contains(stderr, "did not record a reload in "+status) {
		t.Errorf("no reload recorded: exit %d, stderr %q", code, stderr)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("gave up after %v, want about --timeout", took)
	}
	if err := os.WriteFile(status, []byte("soon ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd("reload", "--lock-file", lock, "--reload-status", status); code != 1 || !strings.Contains(stderr, `"soon ok" is not a reload status`) {
		t.Errorf("malformed status: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCmd("reload", "--pid", "-1"); code != 2 || !strings.Contains(stderr, "--pid") {
		t.Errorf("--pid -1: exit %d, stderr %q", code, stderr)
	}
}

var hupOnce sync.Once

// catchSIGHUP keeps SIGHUP from taking its default action (exit) in the
// test binary, before the daemon's own signal.Notify and after the test:
// a signal from reload can still be in flight when a test ends, so the
// channel is never stopped.
func catchSIGHUP() {
	hupOnce.Do(func() {
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		go func() {
			for range hup {
			}
		}()
	})
}

// notifySocket is a NOTIFY_SOCKET for the daemon under test.
type notifySocket struct{ conn *net.UnixConn }

func listenNotify(t *testing.T, path string) notifySocket {
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	return notifySocket{conn}
}

// await reads notifications until one has the line want.
func (n notifySocket) await(t *testing.T, want string) {
	t.Helper()
	buf := make([]byte, 4096)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := n.conn.SetReadDeadline(deadline); err != nil {
			t.Fatal(err)
		}
		k, err := n.conn.Read(buf)
		if err != nil {
			t.Fatalf("waiting for %s from the daemon: %v", want, err)
		}
		for _, l := range strings.Split(string(buf[:k]), "\n") {
			if l == want {
				return
			}
		}
	}
}

// TestReloadChecksThePid: a pid that is not numairqd is not signalled
// (a SIGHUP ends most programs); nor is one that does not exist. A
// daemon whose binary a package upgrade replaced still is one.
func TestReloadChecksThePid(t *testing.T) {
	catchSIGHUP()
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	pid := strconv.Itoa(sleep.Process.Pid)
	code, _, stderr := runCmd("reload", "--pid", pid, "--reload-status", filepath.Join(t.TempDir(), "status"), "--timeout", "1s")
	if code != 1 || !strings.Contains(stderr, "not numairqd: not signalled") {
		t.Errorf("reload --pid of sleep: exit %d, stderr %q", code, stderr)
	}
	if err := sleep.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("sleep is gone after reload --pid %s: %v", pid, err)
	}
	if code, _, stderr := runCmd("reload", "--pid", "999999999"); code != 1 || !strings.Contains(stderr, "no process 999999999") {
		t.Errorf("reload --pid of no process: exit %d, stderr %q", code, stderr)
	}

	proc := t.TempDir()
	for pid, exe := range map[string]string{"10": "/usr/sbin/numairqd (deleted)", "11": "/usr/bin/sleep"} {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(exe, filepath.Join(proc, pid, "exe")); err != nil {
			t.Fatal(err)
		}
	}
	if err := isNumairqd(proc, 10); err != nil {
		t.Errorf("an upgraded daemon: %v", err)
	}
	if err := isNumairqd(proc, 11); err == nil || !strings.Contains(err.Error(), "/usr/bin/sleep") {
		t.Errorf("sleep: %v, want an error naming it", err)
	}
	if err := isNumairqd("/proc", os.Getpid()); err != nil {
		t.Errorf("this process (the same executable): %v", err)
	}
}
