package main

import (
	"os"
	"strings"
	"testing"
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
		"--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--config", writeConfig(t, ""))
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
	code, _, _ := runCmd("run", "--oneshot", "--log.format", "json", "--sysfs", tree.Sys(), "--procfs", tree.Proc(),
		"--config", writeConfig(t, "resync_interval: soon\n"))
	if code != 1 {
		t.Errorf("bad config: exit %d, want 1", code)
	}
	if code, _, stderr := runCmd("run", "--log.level", "loud"); code != 2 || !strings.Contains(stderr, "loud") {
		t.Errorf("bad level: exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := runCmd("--no-such-flag"); code != 2 {
		t.Errorf("unknown flag without a command: exit %d, want 2", code)
	}
}
