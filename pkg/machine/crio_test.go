package machine_test

import (
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/machine"
)

// crioPod is what cri-o leaves for one running pod of a guaranteed QoS
// class with cpu-load-balancing.crio.io: disable: its container's cgroup
// an isolated remote partition, each ancestor's
// cpuset.cpus.exclusive.effective holding its CPUs.
func crioPod(tr *fakesys.Tree, id, cpus string) {
	dir := "sys/fs/cgroup/kubepods.slice/kubepods-pod" + id + ".slice"
	for _, d := range []string{dir, dir + "/crio-" + id + ".scope"} {
		tr.WriteFile(d+"/cpuset.cpus.exclusive.effective", cpus+"\n")
		tr.WriteFile(d+"/cpuset.cpus.partition", "member\n")
	}
	tr.WriteFile(dir+"/crio-"+id+".scope/cpuset.cpus.partition", "isolated\n")
}

// TestPlanCrioHousekeeping: the bytes cri-o writes for
// irq-load-balancing.crio.io: housekeeping and disable
// (internal/runtimehandlerhooks, cri-o f954a17: default_smp_affinity as
// 32-bit hex groups with no newline, then IRQBALANCE_BANNED_CPUS, its
// complement, quoted, appended to irqbalance's environment file when no
// line starts with it). A pod's housekeeping CPUs (its first and that
// one's thread siblings) stay allowed although its isolated partition
// holds them; in disable mode, or with no IRQ ban, the partition is
// banned whole. After PostStop (IRQ bans lifted first, the partition
// after) everything is allowed again.
func TestPlanCrioHousekeeping(t *testing.T) {
	const debian = "# Configuration for the irqbalance daemon\n#IRQBALANCE_BANNED_CPUS=\n"
	for _, tc := range []struct {
		name, dflt, env, isolated string
		pods                      [][2]string // id, CPUs
		allowed, partitions, hk   string
		hkUsed                    bool // the housekeeping CPUs are the device's node's
	}{
		{"housekeeping", "0000001f", "000000e0", "4-7", [][2]string{{"1", "4-7"}}, "0-4", "5-7", "4", true},
		{"disable", "0000000f", "000000f0", "4-7", [][2]string{{"1", "4-7"}}, "0-3", "4-7", "", false},
		{"housekeeping, CPU balancing on", "0000001f", "000000e0", "", nil, "0-4", "", "", false},
		{"CPU balancing off only", "ff", "", "4-7", [][2]string{{"1", "4-7"}}, "0-3", "4-7", "", false},
		{"two pods", "000000f7", "00000008", "2-3,6-7", [][2]string{{"1", "2-3"}, {"2", "6-7"}}, "0-2,4-5", "3,6-7", "2", false},
		{"stopped, partition still there", "000000ff", "00000000", "4-7", [][2]string{{"1", "4-7"}}, "0-3", "4-7", "", false},
		{"stopped", "000000ff", "00000000", "", nil, "0-7", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := fakesys.NewQEMUGuestNIC(t, true)
			tr.WriteFile("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
			tr.WriteFile("sys/fs/cgroup/cpuset.cpus.isolated", tc.isolated+"\n")
			tr.WriteFile("sys/fs/cgroup/system.slice/cpuset.cpus.exclusive.effective", "\n")
			tr.WriteFile("sys/fs/cgroup/kubepods.slice/cpuset.cpus.exclusive.effective", tc.isolated+"\n")
			for _, p := range tc.pods {
				crioPod(tr, p[0], p[1])
			}
			tr.WriteFile("proc/irq/default_smp_affinity", tc.dflt)
			env := debian
			if tc.env != "" {
				env += "\nIRQBALANCE_BANNED_CPUS=\"" + tc.env + "\"\n"
			}
			tr.WriteFile("etc/default/irqbalance", env)
			r := machine.NewReader(machine.Roots{Sys: tr.Sys(), Proc: tr.Proc(), Etc: tr.Root + "/etc"})
			p, err := plan(r, parse(t, ""), true)
			if err != nil || p.BansErr != nil {
				t.Fatal(err, p.BansErr)
			}
			if got := p.Plan.Allowed.String(); got != tc.allowed || p.Bans.Partitions.String() != tc.partitions || p.Bans.Housekeeping.String() != tc.hk {
				t.Errorf("allowed %s, partitions %s, housekeeping %s; want %s, %s, %s", got, p.Bans.Partitions, p.Bans.Housekeeping, tc.allowed, tc.partitions, tc.hk)
			}
			var by []string
			for _, tb := range p.ToolBans() {
				by = append(by, tb.Source+" "+tb.CPUs.String())
			}
			t.Logf("bans: %s", strings.Join(by, ", "))
			allowed, _ := cpumask.ParseList(tc.allowed)
			used := cpumask.Mask{}
			for _, d := range p.Plan.Devices {
				for _, q := range d.IRQs {
					if !q.Planned.IsSubsetOf(allowed) && !q.Planned.IsEmpty() {
						t.Errorf("IRQ %d %s planned on %s, outside %s", q.Number, q.Name, q.Planned, tc.allowed)
					}
					used = used.Or(q.Planned)
				}
			}
			if hk, _ := cpumask.ParseList(tc.hk); tc.hkUsed && !hk.IsSubsetOf(used) {
				t.Errorf("housekeeping CPUs %s take no IRQ: planned on %s", hk, used)
			}
		})
	}
}
