package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/numairqd/numairqd/pkg/daemon"
)

// TestRunOneshotDryRun runs the daemon command once over a fixture in
// dry-run mode: it succeeds and writes nothing.
func TestRunOneshotDryRun(t *testing.T) {
	tree := planFixture(t)
	before, err := os.ReadFile(tree.Path("proc/irq/25/smp_affinity_list"))
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd("run", "--oneshot", "--dry-run", "--no-events", "--log.format", "json",
		"--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "", "--config", writeConfig(t, ""))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	after, _ := os.ReadFile(tree.Path("proc/irq/25/smp_affinity_list"))
	if string(after) != string(before) {
		t.Errorf("dry run changed IRQ 25: %q -> %q", before, after)
	}
}

func TestRunBadConfigAndFlags(t *testing.T) {
	tree := planFixture(t)
	code, _, _ := runCmd("run", "--oneshot", "--log.format", "json", "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "",
		"--config", writeConfig(t, "resync_interval: soon\n"))
	if code != 1 {
		t.Errorf("bad config: exit %d, want 1", code)
	}
	if code, _, stderr := runCmd("run", "--log.level", "loud"); code != 2 || !strings.Contains(stderr, "loud") {
		t.Errorf("bad level: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCmd("run", "--listen", "localhost"); code != 2 || !strings.Contains(stderr, `--listen: invalid address "localhost": missing port in address`) {
		t.Errorf("bad --listen: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCmd("run", "--listen", "127.0.0.1:http"); code != 2 || !strings.Contains(stderr, `port "http" is not a number`) {
		t.Errorf("bad --listen port: exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := runCmd("--no-such-flag"); code != 2 {
		t.Errorf("unknown flag without a command: exit %d, want 2", code)
	}
}

// TestLockFile: a second lock on the same file fails and names the
// holder; closing the first frees it.
func TestLockFile(t *testing.T) {
	path := t.TempDir() + "/run/numairqd.lock"
	first, err := lockFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockFile(path); err == nil || !strings.Contains(err.Error(), path) ||
		!strings.Contains(err.Error(), fmt.Sprintf("held by numairqd pid %d", os.Getpid())) {
		t.Errorf("second lock: %v, want an error naming %s and pid %d", err, path, os.Getpid())
	}
	first.Close()
	again, err := lockFile(path)
	if err != nil {
		t.Fatalf("lock after the first was released: %v", err)
	}
	again.Close()
}

// TestRunRefusesSecondInstance: `numairqd run --oneshot` with a lock
// another process holds exits 1 and writes nothing; once the lock is
// free the same command runs and exits 0. (The message is
// TestLockFile's: the logger writes to the process's stderr.)
func TestRunRefusesSecondInstance(t *testing.T) {
	tree := planFixture(t)
	path := t.TempDir() + "/numairqd.lock"
	held, err := lockFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	before, _ := os.ReadFile(tree.Path("proc/irq/25/smp_affinity_list"))
	args := []string{"run", "--oneshot", "--no-events", "--log.format", "json", "--lock-file", path,
		"--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "", "--config", writeConfig(t, "")}
	if code, _, _ := runCmd(args...); code != 1 {
		t.Fatalf("with the lock held: exit %d, want 1", code)
	}
	if after, _ := os.ReadFile(tree.Path("proc/irq/25/smp_affinity_list")); string(after) != string(before) {
		t.Errorf("second instance changed IRQ 25: %q -> %q", before, after)
	}
	held.Close()
	if code, _, _ := runCmd(args...); code != 0 {
		t.Errorf("with the lock free: exit %d, want 0", code)
	}
}

// TestStartLineSaysVersionAndEffectiveListen: the start line gives the
// version --version prints, the address --listen chose, not the
// config's listen it overrides, and the mode --dry-run forces.
func TestStartLineSaysVersionAndEffectiveListen(t *testing.T) {
	tree := planFixture(t)
	cfg := writeConfig(t, "listen: \"127.0.0.1:9999\"\nmode: enforce\n")
	// The daemon: --listen wins over the config's listen.
	for _, tc := range []struct {
		flag, listen, from string
	}{
		{"127.0.0.1:9100", "127.0.0.1:9100", "--listen"},
		{"", "127.0.0.1:9999", "config"},
	} {
		d, err := daemon.New(daemon.Options{Sysfs: tree.Sys(), Procfs: tree.Proc(), ConfigPath: cfg, Listen: tc.flag, DryRun: true, Log: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		enc := zapcore.NewMapObjectEncoder()
		for _, f := range startFields(thisBuild(), d, tc.flag, true, false) {
			f.AddTo(enc)
		}
		if enc.Fields["listen"] != tc.listen || enc.Fields["listen_from"] != tc.from || enc.Fields["version"] != versionLine(thisBuild()) {
			t.Errorf("--listen %q: start fields %v, want listen %s from %s and version %q", tc.flag, enc.Fields, tc.listen, tc.from, versionLine(thisBuild()))
		}
	}
	// --oneshot, run for real: it serves nothing, and says so.
	code, _, stderr := runCmd("run", "--oneshot", "--dry-run", "--no-events", "--log.format", "json", "--sysfs", tree.Sys(),
		"--procfs", tree.Proc(), "--etc", "", "--config", cfg, "--listen", "127.0.0.1:9100")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var start map[string]any
	for line := range strings.Lines(stderr) {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) == nil && e["msg"] == "numairqd starting" {
			start = e
		}
	}
	if start == nil || start["listen"] != "none" || start["version"] != versionLine(thisBuild()) || start["mode"] != "observe" {
		t.Errorf("--oneshot start line %v, want listen none, the version and mode observe (--dry-run over mode: enforce)", start)
	}
}
