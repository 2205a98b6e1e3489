package machine_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/policy"
)

// planned is one read and its plan.
type planned struct {
	machine.Machine
	Plan *policy.Plan
}

// plan reads with r and plans with an empty memory, as `numairqd plan`.
func plan(r *machine.Reader, cfg *config.Config, fresh bool) (planned, error) {
	least := inventory.DepthAffinities
	if fresh {
		least = inventory.DepthAll
	}
	m, err := r.Read(cfg, least, nil)
	if err != nil {
		return planned{}, err
	}
	return planned{m, policy.Compute(m.Snapshot, m.Inventory, cfg, m.ToolBans(), policy.Memory{}, policy.Balancing{})}, nil
}

func parse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	c, err := config.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPlanHonoursIrqbalanceBans: cri-o's hex variable and tuned's list
// in irqbalance's environment file, found by auto under Etc, and the
// CPUs cri-o cleared from default_smp_affinity are banned on top of
// banned_cpus; a malformed file keeps the previous bans.
func TestPlanHonoursIrqbalanceBans(t *testing.T) {
	tr := fakesys.NewQEMUGuestNIC(t, true)
	etc := filepath.Join(tr.Root, "etc")
	env := filepath.Join(etc, "default", "irqbalance")
	tr.WriteFile("etc/default/irqbalance", "IRQBALANCE_BANNED_CPUS=\"00000000,00000010\"\nIRQBALANCE_BANNED_CPULIST=0\n")
	tr.WriteFile("proc/irq/default_smp_affinity", "bf\n") // CPU 6 cleared
	r := machine.NewReader(machine.Roots{Sys: tr.Sys(), Proc: tr.Proc(), Etc: etc})
	cfg := parse(t, "banned_cpus: 7\n")
	p, err := plan(r, cfg, true)
	if err != nil || p.BansErr != nil {
		t.Fatal(err, p.BansErr)
	}
	if got := p.Plan.Allowed.String(); got != "1-3,5" {
		t.Errorf("allowed %s, want 1-3,5 (7 by config, 0 and 4 by the env file, 6 by default_smp_affinity)", got)
	}
	if p.Bans.EnvFile != env || p.Bans.Env.String() != "0,4" || p.Bans.Default.String() != "6" {
		t.Errorf("bans %+v", p.Bans)
	}
	if cfg.BannedCPUs.String() != "7" {
		t.Errorf("the config was changed: banned_cpus %s", cfg.BannedCPUs)
	}
	// The plan says which source banned which CPU.
	var by []string
	for _, e := range p.Plan.Excluded {
		by = append(by, e.Source+" "+e.CPUs.String())
	}
	if got := strings.Join(by, ", "); got != "banned_cpus 7, irqbalance_env 0,4, default_smp_affinity 6" {
		t.Errorf("excluded by source: %s", got)
	}
	if e := p.Plan.Excluded[1]; !strings.Contains(e.Why, env) {
		t.Errorf("env file ban %q does not name %s", e.Why, env)
	}

	// A read that may trust what it kept keeps the bans without reading them.
	tr.WriteFile("etc/default/irqbalance", "IRQBALANCE_BANNED_CPULIST=\n")
	if p, _ = plan(r, cfg, false); p.Plan.Allowed.String() != "1-3,5" {
		t.Errorf("a cpu round re-read the bans: allowed %s", p.Plan.Allowed)
	}
	// Malformed: the previous bans stay, and the round says why.
	tr.WriteFile("etc/default/irqbalance", "IRQBALANCE_BANNED_CPULIST=5-\n")
	p, err = plan(r, cfg, true)
	if err != nil || p.BansErr == nil || !strings.Contains(p.BansErr.Error(), env+":1: IRQBALANCE_BANNED_CPULIST=\"5-\"") {
		t.Fatalf("malformed file: %v, bans error %v", err, p.BansErr)
	}
	if got := p.Plan.Allowed.String(); got != "1-3,5" {
		t.Errorf("allowed %s after a malformed file, want the previous bans' 1-3,5", got)
	}
	// Put back: the plan returns.
	tr.WriteFile("etc/default/irqbalance", "IRQBALANCE_BANNED_CPULIST=\n")
	tr.WriteFile("proc/irq/default_smp_affinity", "ff\n")
	if p, _ = plan(r, cfg, true); p.Plan.Allowed.String() != "0-6" || p.BansErr != nil {
		t.Errorf("bans cleared: allowed %s, error %v; want 0-6", p.Plan.Allowed, p.BansErr)
	}
}

// TestPlanBansSwitches: honor_default_smp_affinity follows the env file
// unless set; irqbalance_env_file "" and an empty Etc read nothing.
func TestPlanBansSwitches(t *testing.T) {
	tr := fakesys.NewQEMUGuestNIC(t, true)
	etc := filepath.Join(tr.Root, "etc")
	tr.WriteFile("proc/irq/default_smp_affinity", "7f\n") // CPU 7 cleared
	allowed := func(roots machine.Roots, yaml string) string {
		t.Helper()
		p, err := plan(machine.NewReader(roots), parse(t, yaml), true)
		if err != nil {
			t.Fatal(err)
		}
		return p.Plan.Allowed.String()
	}
	roots := machine.Roots{Sys: tr.Sys(), Proc: tr.Proc(), Etc: etc}
	if got := allowed(roots, ""); got != "0-7" {
		t.Errorf("no env file, honor auto: allowed %s, want 0-7", got)
	}
	if got := allowed(roots, "honor_default_smp_affinity: true\n"); got != "0-6" {
		t.Errorf("honor true: allowed %s, want 0-6", got)
	}
	tr.WriteFile("etc/sysconfig/irqbalance", "IRQBALANCE_BANNED_CPULIST=1\n")
	if got := allowed(roots, ""); got != "0,2-6" {
		t.Errorf("env file, honor auto: allowed %s, want 0,2-6", got)
	}
	if got := allowed(roots, "honor_default_smp_affinity: false\n"); got != "0,2-7" {
		t.Errorf("env file, honor false: allowed %s, want 0,2-7", got)
	}
	if got := allowed(roots, "irqbalance_env_file: \"\"\n"); got != "0-7" {
		t.Errorf("env file off: allowed %s, want 0-7", got)
	}
	if got := allowed(machine.Roots{Sys: tr.Sys(), Proc: tr.Proc()}, ""); got != "0-7" {
		t.Errorf("no Etc: allowed %s, want 0-7", got)
	}
	if got := allowed(roots, "irqbalance_env_file: "+filepath.Join(etc, "sysconfig", "irqbalance")+"\nhonor_default_smp_affinity: false\n"); got != "0,2-7" {
		t.Errorf("explicit path: allowed %s, want 0,2-7", got)
	}
}

// TestPlanHonoursIsolatedPartitions: the CPUs cgroup v2's root lists in
// cpuset.cpus.isolated leave the plan, said so by source, unless
// isolated_partitions is off; a malformed file keeps the previous bans
// and names itself; a missing one (cgroup v1, before 6.8) bans nothing.
func TestPlanHonoursIsolatedPartitions(t *testing.T) {
	tr := fakesys.NewQEMUGuestNIC(t, true)
	r := machine.NewReader(machine.Roots{Sys: tr.Sys(), Proc: tr.Proc()})
	cfg := parse(t, "")
	if p, err := plan(r, cfg, true); err != nil || p.BansErr != nil || p.Plan.Allowed.String() != "0-7" {
		t.Fatalf("no cgroup v2: allowed %s, %v, %v; want 0-7", p.Plan.Allowed, err, p.BansErr)
	}
	tr.WriteFile("sys/fs/cgroup/cpuset.cpus.isolated", "6-7\n")
	p, err := plan(r, cfg, true)
	if err != nil || p.BansErr != nil {
		t.Fatal(err, p.BansErr)
	}
	if got := p.Plan.Allowed.String(); got != "0-5" || p.Bans.Partitions.String() != "6-7" {
		t.Errorf("allowed %s, partitions %s; want 0-5 and 6-7", got, p.Bans.Partitions)
	}
	if len(p.Plan.Excluded) != 1 || p.Plan.Excluded[0].Source != policy.BanIsolatedPartitions ||
		!strings.Contains(p.Plan.Excluded[0].Why, "isolated partition") || !strings.Contains(p.Plan.Excluded[0].Why, "cpuset.cpus.isolated") {
		t.Errorf("excluded %+v, want one isolated_partitions exclusion naming cpuset.cpus.isolated", p.Plan.Excluded)
	}
	for _, d := range p.Plan.Devices {
		for _, q := range d.IRQs {
			if q.Planned.Intersects(p.Bans.Partitions) {
				t.Errorf("IRQ %d %s planned on %s, in the partition", q.Number, q.Name, q.Planned)
			}
		}
	}
	if got := allowedWith(t, tr, "isolated_partitions: false\n"); got != "0-7" {
		t.Errorf("isolated_partitions off: allowed %s, want 0-7", got)
	}
	tr.WriteFile("sys/fs/cgroup/cpuset.cpus.isolated", "6-\n")
	p, err = plan(r, cfg, true)
	if err != nil || p.BansErr == nil || !strings.Contains(p.BansErr.Error(), "cpuset.cpus.isolated") {
		t.Fatalf("malformed file: %v, bans error %v; want one naming the file", err, p.BansErr)
	}
	if got := p.Plan.Allowed.String(); got != "0-5" {
		t.Errorf("allowed %s after a malformed file, want the previous bans' 0-5", got)
	}
	tr.WriteFile("sys/fs/cgroup/cpuset.cpus.isolated", "\n") // the partition removed
	if p, _ = plan(r, cfg, true); p.Plan.Allowed.String() != "0-7" || p.BansErr != nil {
		t.Errorf("partition removed: allowed %s, error %v; want 0-7", p.Plan.Allowed, p.BansErr)
	}
}

// allowedWith is the allowed CPUs of a fresh read of tr with yaml.
func allowedWith(t *testing.T, tr *fakesys.Tree, yaml string) string {
	t.Helper()
	p, err := plan(machine.NewReader(machine.Roots{Sys: tr.Sys(), Proc: tr.Proc()}), parse(t, yaml), true)
	if err != nil || p.BansErr != nil {
		t.Fatal(err, p.BansErr)
	}
	return p.Plan.Allowed.String()
}
