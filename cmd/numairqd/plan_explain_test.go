package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
)

// TestPlanExplains: with CPUs banned by the config, by cri-o's
// environment file, default_smp_affinity and isolated partition, and
// isolated, the plan
// names each source above the devices and on each device, and says
// why auto chose linear for 6 queues on 3 CPUs.
func TestPlanExplains(t *testing.T) {
	m := fakesys.QEMUGuest()
	m.Isolated = "3"
	tree := fakesys.New(t)
	tree.AddMachine(m)
	tree.AddQEMUGuestDevices()
	tree.WriteFile("etc/sysconfig/irqbalance", "IRQBALANCE_BANNED_CPUS=00000004\n") // cri-o's hex: CPU 2
	tree.WriteFile("proc/irq/default_smp_affinity", "bf\n")                         // CPU 6 cleared
	tree.WriteFile("sys/fs/cgroup/cpuset.cpus.isolated", "6\n")                     // and isolated
	args := []string{"plan", "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", filepath.Join(tree.Root, "etc"),
		"--config", writeConfig(t, "banned_cpus: 0-1\n")}
	code, text, stderr := runCmd(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	env := filepath.Join(tree.Root, "etc", "sysconfig", "irqbalance")
	// The prose is wrapped at 100 columns like the status view's.
	wrapped := func(s, indent string) string {
		var b strings.Builder
		writeWrapped(&b, s, indent)
		return b.String()
	}
	for _, want := range []string{
		"Allowed CPUs: 4-5,7\n",
		"Not allowed: 0-1, banned by the config's banned_cpus\n",
		wrapped("Not allowed: 2, banned by IRQBALANCE_BANNED_CPUS or IRQBALANCE_BANNED_CPULIST in "+env+" (cri-o and tuned write them; irqbalance_env_file)", "  "),
		wrapped("Not allowed: 6, left out of /proc/irq/default_smp_affinity (cri-o clears the CPUs of pods with irq-load-balancing disabled; honor_default_smp_affinity)", "  "),
		wrapped("Not allowed: 6, in an isolated partition (the cgroup v2 root's cpuset.cpus.isolated; cri-o makes one for a pod with cpu-load-balancing disabled; isolated_partitions)", "  "),
		"Not allowed: 3, isolated from the scheduler (isolcpus=; exclude_isolated)\n",
		`Tables: CURRENT -> PLANNED is the affinity now -> the one to write; "= X": already X, nothing` + "\n  written;",
		"0000:41:00.0  driver virtio-pci (virtio_net, network)  interfaces [eth0]  node 2  policy linear  mask cpu  \n" +
			wrapped("  policy: auto (the default) chose linear: 6 queues >= 3 allowed CPUs, so queue i takes the i-th allowed CPU, wrapping, and every CPU serves the device", "    ") +
			wrapped("  cpus: allowed CPUs 4-5,7; not allowed: 0-1 (banned_cpus), 2 (irqbalance_env), 6 (default_smp_affinity), 6 (isolated_partitions), 3 (isolated)", "    ") +
			"  IRQ  ",
		"0000:21:00.0  driver nvme (storage)  interfaces []  node 1  policy numa-hop  mask cpu  \n" +
			wrapped("  policy: auto (the default) chose numa-hop: no queue IRQ to place (the 8 queue IRQs are managed by the kernel or unreadable), only control IRQs", "    "),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}

	_, js, _ := runCmd(append(args, "--format", "json")...)
	var doc struct {
		Excluded []struct{ Source, CPUs, Why string } `json:"excluded"`
		Devices  []struct {
			PCI       string   `json:"pci"`
			Drivers   []string `json:"drivers"`
			Class     string   `json:"class"`
			PolicyWhy string   `json:"policy_why"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	var by []string
	for _, e := range doc.Excluded {
		by = append(by, e.Source+" "+e.CPUs)
	}
	if got := strings.Join(by, ", "); got != "banned_cpus 0-1, irqbalance_env 2, default_smp_affinity 6, isolated_partitions 6, isolated 3" {
		t.Errorf("JSON excluded: %s", got)
	}
	nic := doc.Devices[1]
	if strings.Join(nic.Drivers, " ") != "virtio-pci virtio_net" || nic.Class != "0x020000" || !strings.HasPrefix(nic.PolicyWhy, "auto (the default) chose linear: 6 queues >= 3") {
		t.Errorf("JSON nic %+v", nic)
	}
}

// TestPlanShowsTaken: a device whose queues are not all on its driver's
// CPUs says which other devices hold those, and how its distances
// compare with the driver's, above its table.
func TestPlanShowsTaken(t *testing.T) {
	tree := fakesys.New(t)
	tree.AddMachine(fakesys.QEMUGuest())
	tree.AddQEMUGuestDevices()
	tree.AddVirtioNet(fakesys.VirtioNet{BDF: "0000:42:00.0", Index: 1, Interface: "eth1", Pairs: 4, FirstIRQ: 60, NUMANode: 3})
	code, text, stderr := runCmd("plan", "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "", "--config", writeConfig(t, ""),
		"--device", "eth1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Its driver gives queues 2 and 3 CPUs 4 and 5 (node 2, distance
	// 12), which eth0 holds; node 3's own 6 and 7 take them at no more
	// queues per CPU.
	for _, want := range []string{
		"  taken: its drivers' CPUs that hold other devices' queues: 4-5 by 0000:41:00.0\n",
		"  locality: queue IRQs at mean distance 10.0, worst 10; the driver's own spread: 11.0, worst 12\n",
		"virtio1-input.2   2      0-7 -> 6 ",
		"Most queue IRQs on one CPU 4, core 4, LLC -; the drivers' own spreads together: 4, 4, -\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}
