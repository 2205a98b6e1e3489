package main

import (
	"encoding/json"
	"regexp"
	"testing"
)

// TestPlanShowsEffective: `numairqd plan` shows where the kernel has each
// IRQ it would place, and marks one outside a plan that writes nothing.
func TestPlanShowsEffective(t *testing.T) {
	tree := planFixture(t)
	tree.WriteFileMode("proc/irq/40/effective_affinity_list", "0\n", 0o444) // planned = 2-3, already set
	tree.WriteFileMode("proc/irq/25/effective_affinity_list", "7\n", 0o444) // planned 4, not yet written
	args := []string{"plan", "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "", "--config", writeConfig(t, "")}
	code, stdout, stderr := runCmd(append(args, "--format", "text")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, re := range []string{`(?m)^  40 +nvme0q0 .*-> = 2-3 +0 \(outside\) +no `, `(?m)^  25 +virtio0-input.0 .*-> 4 +7 +no `, `(?m)^  26 +virtio0-output.0 .*-> 4 +- +no `} {
		if !regexp.MustCompile(re).MatchString(stdout) {
			t.Errorf("text output lacks %s:\n%s", re, stdout)
		}
	}
	_, stdout, _ = runCmd(append(args, "--format", "json")...)
	var doc struct {
		Devices []struct {
			IRQs []struct {
				IRQ       int    `json:"irq"`
				Effective string `json:"effective"`
			} `json:"irqs"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for _, d := range doc.Devices {
		for _, q := range d.IRQs {
			got[q.IRQ] = q.Effective
		}
	}
	if got[40] != "0" || got[25] != "7" || got[26] != "" {
		t.Errorf("json effective: 40 %q, 25 %q, 26 %q; want 0, 7 and none", got[40], got[25], got[26])
	}
}
