package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
)

// planFixture is the e2e guest: 4 nodes of 2 CPUs (distances
// 10/12/20/22), a virtio-net with 6 queue pairs on node 2, threaded
// NAPI on (its kthreads on every CPU but RX 0's, on CPU 4 already), and
// an NVMe on node 1 whose queues are managed.
func planFixture(t *testing.T) *fakesys.Tree {
	tree := fakesys.New(t)
	tree.AddMachine(fakesys.QEMUGuest())
	tree.AddQEMUGuestDevices()
	threads, _, _ := fakesys.VirtioNAPIThreads("eth0", 6, 8193, 700, cpumask.New(0, 1, 2, 3, 4, 5, 6, 7))
	threads[len(threads)-1].Allowed = cpumask.New(4)
	tree.AddNAPIThreads("eth0", threads...)
	return tree
}

func writeConfig(t *testing.T, body string) string {
	path := filepath.Join(t.TempDir(), "numairqd.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPlanGolden(t *testing.T) {
	tree := planFixture(t)
	cfg := writeConfig(t, "banned_cpus: 7\n")
	for _, format := range []string{"text", "json"} {
		code, stdout, stderr := runCmd("plan", "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "", "--config", cfg, "--format", format)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		golden(t, "plan-4node."+format, []byte(stdout))
	}
}

// TestPlanJSONContract checks the keys scripts rely on.
func TestPlanJSONContract(t *testing.T) {
	tree := planFixture(t)
	_, stdout, _ := runCmd("plan", "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "", "--config", writeConfig(t, ""), "--format", "json")
	var doc struct {
		Devices []struct {
			PCI    string `json:"pci"`
			Driver string `json:"driver"`
			Node   int    `json:"node"`
			Policy string `json:"policy"`
			IRQs   []struct {
				IRQ     int    `json:"irq"`
				Name    string `json:"name"`
				Queue   *int   `json:"queue"`
				Managed bool   `json:"managed"`
				Current string `json:"current"`
				Planned string `json:"planned"`
			} `json:"irqs"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Devices) != 2 {
		t.Fatalf("devices = %+v", doc.Devices)
	}
	nvme, nic := doc.Devices[0], doc.Devices[1]
	if nic.PCI != "0000:41:00.0" || nic.Driver != "virtio-pci" || nic.Node != 2 || nic.Policy != "numa-hop" {
		t.Errorf("nic = %+v", nic)
	}
	want := []string{"4", "5", "6", "7", "0", "1"} // node 2's spread order
	for _, q := range nic.IRQs {
		if q.Queue == nil {
			continue
		}
		if q.Planned != want[*q.Queue] {
			t.Errorf("IRQ %d (%s) planned %q, want %q", q.IRQ, q.Name, q.Planned, want[*q.Queue])
		}
	}
	for _, q := range nvme.IRQs {
		if q.Managed != (q.Name != "nvme0q0") || (q.Managed && q.Planned != "") {
			t.Errorf("nvme IRQ %+v", q)
		}
	}
}

// TestPlanUnreadableIRQ: one IRQ's garbage smp_affinity_list leaves that
// IRQ alone, named in the plan and in a warning on stderr; the rest of
// the machine is planned.
func TestPlanUnreadableIRQ(t *testing.T) {
	tree := planFixture(t)
	tree.WriteFile("proc/irq/25/smp_affinity_list", "4-x\n")
	code, stdout, stderr := runCmd("plan", "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "", "--config", writeConfig(t, ""))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "warning: IRQ 25 (virtio0-input.0) could not be placed: left alone, files unreadable: ") ||
		!strings.Contains(stderr, "irq/25/smp_affinity_list") || !strings.Contains(stderr, `"4-x"`) {
		t.Errorf("stderr %q lacks the warning naming the file and value", stderr)
	}
	if !strings.Contains(stdout, "virtio0-output.0  0      0-7 -> 4") || !strings.Contains(stdout, "files unreadable") {
		t.Errorf("plan does not place the rest and name the unreadable IRQ:\n%s", stdout)
	}
}

func TestPlanErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(t *testing.T, tree *fakesys.Tree) []string
		want    []string
	}{
		{"malformed interrupts line", func(t *testing.T, tree *fakesys.Tree) []string {
			b, _ := os.ReadFile(tree.Path("proc/interrupts"))
			tree.WriteFile("proc/interrupts", string(b)+" 99: 1 x 2\n")
			return nil
		}, []string{"interrupts", "99: 1 x 2"}},
		{"missing interrupts", func(t *testing.T, tree *fakesys.Tree) []string {
			tree.Remove("proc/interrupts")
			return nil
		}, []string{"interrupts"}},
		{"bad config", func(t *testing.T, tree *fakesys.Tree) []string {
			return []string{"--config", writeConfig(t, "banned_cpus: 1\ndevices:\n  - match: {driver: x}\n    policy: spread\n")}
		}, []string{"numairqd.yaml:4", "devices[0].policy", `"spread"`}},
		{"missing config", func(t *testing.T, tree *fakesys.Tree) []string {
			return []string{"--config", "/nonexistent/numairqd.yaml"}
		}, []string{"/nonexistent/numairqd.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := planFixture(t)
			extra := tc.corrupt(t, tree)
			if extra == nil {
				extra = []string{"--config", writeConfig(t, "")}
			}
			code, stdout, stderr := runCmd(append([]string{"plan", "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", ""}, extra...)...)
			if code != 1 || stdout != "" {
				t.Errorf("exit %d, stdout %q", code, stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not mention %q", stderr, w)
				}
			}
		})
	}
}

// TestPlanShowsLoads: with balance: load, plan samples the loads over
// --load-sample and shows each IRQ's load, the per-CPU loads and the
// verdict; --load-sample 0 plans without them.
func TestPlanShowsLoads(t *testing.T) {
	tree := planFixture(t)
	var stat strings.Builder
	stat.WriteString("cpu  0 0 0 8000 0 0 80 0 0 0\n")
	for c := range 8 {
		stat.WriteString("cpu" + string(rune('0'+c)) + " 0 0 0 1000 0 0 10 0 0 0\n")
	}
	tree.WriteFile("proc/stat", stat.String())
	cfg := writeConfig(t, "balance: load\n")
	code, stdout, stderr := runCmd("plan", "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "", "--config", cfg, "--load-sample", "10ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"policy numa-hop  mask cpu  balance load",
		"MANAGED  LOAD  REASON",
		"numa-hop, balance load: queue 0 -> CPU 4",
		"Interrupt load per allowed CPU (measured irq+softirq time), as planned:",
		"Peak 0.0%, mean 0.0%",
		"6 queues balanced by load",
		"No move: busiest CPU under min_peak.",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	_, stdout, _ = runCmd("plan", "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "", "--config", cfg, "--load-sample", "0")
	if strings.Contains(stdout, "LOAD") || strings.Contains(stdout, "Interrupt load") {
		t.Errorf("--load-sample 0 still shows loads:\n%s", stdout)
	}
	code, _, stderr = runCmd("plan", "--sysfs", tree.Sys(), "--procfs", t.TempDir(), "--etc", "", "--config", cfg)
	if code != 1 || !strings.Contains(stderr, "stat") {
		t.Errorf("no /proc/stat: exit %d, stderr %q; want 1 naming the file", code, stderr)
	}
}

// TestPlanWarnsOfSettings: plan prints the daemon's load-time warnings
// on stderr, and shows the IRQ --banirq leaves alone with its reason.
func TestPlanWarnsOfSettings(t *testing.T) {
	tree := planFixture(t)
	tree.WriteFile("etc/default/irqbalance", "IRQBALANCE_ARGS=\"--banirq=25 --hintpolicy=exact\"\n")
	cfg := writeConfig(t, "banned_cpus: \"999\"\ndevices:\n  - match: {interface: eht0}\n    policy: linear\n")
	code, stdout, stderr := runCmd("plan", "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", tree.Path("etc"), "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	env := tree.Path("etc/default/irqbalance")
	for _, want := range []string{
		"numairqd plan: warning: " + env + ":1: IRQBALANCE_ARGS --hintpolicy=exact: numairqd ignores affinity_hint and spreads by NUMA distance; use a device rule\n",
		"numairqd plan: warning: " + cfg + `:3: devices[0] matches no device or IRQ here (match interface "eht0"; did you mean eth0?); it applies to any that appear` + "\n",
		"numairqd plan: warning: " + cfg + ": banned_cpus: CPUs 999 do not exist here (possible CPUs 0-7); banned should they appear\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "25   virtio0-input.0   0      0-7 -> (left alone)") || !strings.Contains(stdout, "left alone: banned by irqbalance's --banirq in "+env) {
		t.Errorf("plan does not show IRQ 25 left alone by --banirq:\n%s", stdout)
	}
}

// TestOnHost: the running kernel's roots at /sys and /proc or mounted
// elsewhere (here the same mounts by another path) are the host's;
// a fixture tree, or a real sysfs beside one, is not. Nothing is
// written.
func TestOnHost(t *testing.T) {
	tree := fakesys.New(t)
	for _, tc := range []struct {
		sys, proc string
		want      bool
	}{
		{"/sys", "/proc", true},
		{"/sys/.", "/proc/.", true},
		{tree.Sys(), tree.Proc(), false},
		{"/sys/.", tree.Proc(), false},
		{tree.Sys(), "/proc/.", false},
	} {
		if got := onHost(tc.sys, tc.proc); got != tc.want {
			t.Errorf("onHost(%s, %s) = %v, want %v", tc.sys, tc.proc, got, tc.want)
		}
	}
}
