package policy_test

// TestCorpus plans every capture of testdata/hosts (see its README.md):
// the fleet shapes, real topologies and real hosts' listings, each read
// as `numairqd plan --capture` reads it.

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/capture"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/policy"
)

var update = flag.Bool("update", false, "rewrite the golden plans testdata/hosts/*.plan")

// hostsDir holds the corpus captures and their golden plans.
const hostsDir = "../../testdata/hosts"

// TestCorpus opens each capture, reads it and plans it with its
// recorded config (the default without one), then checks that nothing
// failed, no IRQ was left unplaced (managed IRQs and those a rule
// ignores are left alone on purpose and are not), the objective holds,
// and the plan is its golden plan. It logs the objective's table.
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(hostsDir, "*.tar.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no capture in %s (%v)", hostsDir, err)
	}
	lines := make([]string, len(files))
	// Runs after the parallel subtests.
	t.Cleanup(func() { t.Log("\n" + strings.Join(lines, "\n")) })
	for i, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".tar.gz")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			lines[i] = planCapture(t, name, f)
		})
	}
}

// planCapture checks the capture at path and returns its objective line.
func planCapture(t *testing.T, name, path string) string {
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cfg := config.Default()
	if r.Config != "" {
		if cfg, err = config.Load(r.Config); err != nil {
			t.Fatal(err)
		}
	}
	m, err := machine.Read(r.Roots, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := policy.Compute(m.Snapshot, m.Inventory, cfg, m.ToolBans(), policy.Memory{}, policy.Balancing{})
	for _, q := range p.Unplaced() {
		t.Errorf("%s: IRQ %d (%s) unplaced: %s", name, q.Number, q.Name, q.Reason)
	}
	line := objective(t, name, m.Snapshot, p)

	golden := filepath.Join(hostsDir, name+".plan")
	got := planText(p)
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return line
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s: the plan differs from %s (review the diff after -update):\n%s", name, golden, lineDiff(string(want), got))
	}
	return line
}

// planText is p as a golden plan: a header, then per device its line
// and its IRQs, runs of queues folded (testdata/hosts/README.md).
func planText(p *policy.Plan) string {
	var b strings.Builder
	st, ds := p.Stacking, p.DriversStacking
	fmt.Fprintf(&b, "allowed %s; queue IRQs per CPU/core/LLC %d/%d/%d, drivers' %d/%d/%d\n",
		p.Allowed, st.CPU, st.Core, st.LLC, ds.CPU, ds.Core, ds.LLC)
	for _, d := range p.Devices {
		fmt.Fprintf(&b, "%s %s node %d policy %s rule %s", cmp.Or(d.PCI, "-"), cmp.Or(d.Driver, "-"), d.Node, d.Policy, cmp.Or(d.Rule, "-"))
		if len(d.Interfaces) > 0 {
			fmt.Fprintf(&b, " %s", strings.Join(d.Interfaces, ","))
		}
		b.WriteByte('\n')
		for i := 0; i < len(d.IRQs); {
			j := i + 1
			for j < len(d.IRQs) && follows(d.IRQs[j-1], d.IRQs[j]) {
				j++
			}
			b.WriteString(irqsText(d.IRQs[i:j]))
			i = j
		}
	}
	return b.String()
}

// follows reports whether b folds into a's run: the next IRQ and queue
// of the same direction, both placed on one CPU or both left alone
// for the same reason.
func follows(a, b policy.IRQ) bool {
	if a.Role != policy.RoleQueue || b.Role != policy.RoleQueue || b.Number != a.Number+1 || b.Queue != a.Queue+1 || a.Dir != b.Dir {
		return false
	}
	if a.LeftAlone() || b.LeftAlone() {
		return a.LeftAlone() && b.LeftAlone() && aloneWhy(a) == aloneWhy(b)
	}
	return a.Planned.Weight() == 1 && b.Planned.Weight() == 1
}

// aloneWhy is the word that says why q is left alone.
func aloneWhy(q policy.IRQ) string {
	if q.Managed {
		return "managed"
	}
	if f := strings.Fields(q.Reason); len(f) > 0 {
		return strings.TrimSuffix(f[0], ":")
	}
	return "alone"
}

// irqsText is one line for a run of IRQs: numbers, role, queues, CPUs.
func irqsText(run []policy.IRQ) string {
	first, last := run[0], run[len(run)-1]
	nums, role, queues := fmt.Sprint(first.Number), "control", "-"
	if len(run) > 1 {
		nums = fmt.Sprintf("%d-%d", first.Number, last.Number)
	}
	if first.Role == policy.RoleQueue {
		role, queues = first.Dir.String(), fmt.Sprintf("q%d", first.Queue)
		if len(run) > 1 {
			queues = fmt.Sprintf("q%d-%d", first.Queue, last.Queue)
		}
	}
	if first.LeftAlone() {
		return fmt.Sprintf("  %s %s %s - %s\n", nums, role, queues, aloneWhy(first))
	}
	var cpus []int
	for _, q := range run {
		cpus = append(cpus, q.Planned.CPUs()...)
	}
	return fmt.Sprintf("  %s %s %s %s\n", nums, role, queues, cpuRuns(cpus))
}

// cpuRuns lists cpus in their order, rising runs as ranges ("8-15,0-7").
func cpuRuns(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i + 1
		for j < len(cpus) && cpus[j] == cpus[j-1]+1 {
			j++
		}
		if j-i == 1 {
			parts = append(parts, fmt.Sprint(cpus[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j-1]))
		}
		i = j
	}
	return strings.Join(parts, ",")
}

// lineDiff lists the lines of want and got that differ, up to 20.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for i := range max(len(w), len(g)) {
		a, b := "", ""
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			out = append(out, fmt.Sprintf("line %d:\n-%s\n+%s", i+1, a, b))
		}
	}
	return strings.Join(out[:min(len(out), 20)], "\n")
}
