package policy_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
)

// TestIrqbalanceSettings is the config and environment file table: each
// row's irqbalance file and config, read and planned as the daemon does
// on the 4-node guest with eth0 (IRQs 24-36, node 2) and the timer
// (IRQ 0, no device), 16 possible CPUs. It checks the IRQs irqbalance's
// settings and rules by number leave alone or pin, with their reasons,
// and every warning: options not followed, rules matching nothing and
// banned CPUs that do not exist. ENV stands for the file's path.
func TestIrqbalanceSettings(t *testing.T) {
	type irq struct{ planned, reason string }
	const placed = "numa-hop: queue "
	for _, tc := range []struct {
		name, env, config string
		irqs              map[int]irq
		xps               map[int]string // eth0's tx queue: the start of its reason
		warnings          []string
	}{
		{name: "the issue's IRQBALANCE_ARGS",
			env: `IRQBALANCE_ARGS="--banirq=25 --policyscript=/usr/local/bin/p.sh --hintpolicy=exact"`,
			irqs: map[int]irq{25: {"", "left alone: banned by irqbalance's --banirq in ENV"},
				26: {"4", placed + "0"}, 27: {"5", placed + "1"}},
			warnings: []string{
				"ENV:1: IRQBALANCE_ARGS --policyscript=/usr/local/bin/p.sh: numairqd runs no scripts; a device rule sets a device's policy, CPUs or node, or ignores it",
				"ENV:1: IRQBALANCE_ARGS --hintpolicy=exact: numairqd ignores affinity_hint and spreads by NUMA distance; use a device rule"}},
		{name: "-i N", env: `IRQBALANCE_ARGS="-i 27"`,
			irqs: map[int]irq{27: {"", "left alone: banned by irqbalance's --banirq in ENV"}, 25: {"4", placed + "0"}}},
		{name: "a banned completion IRQ leaves its XPS map alone", env: `IRQBALANCE_ARGS="--banirq 28"`,
			xps: map[int]string{1: "left alone: its completion IRQ 28 is left alone", 0: "xps follows completion IRQ 26 on CPU 4"}},
		{name: "a banned IRQ with no device is not planned anyway", env: `IRQBALANCE_ARGS="--banirq=0"`,
			irqs: map[int]irq{0: {"-", ""}, 25: {"4", placed + "0"}}},
		{name: "IRQBALANCE_BANNED_INTERRUPTS", env: "IRQBALANCE_BANNED_INTERRUPTS=\"25 29\"\n",
			irqs: map[int]irq{25: {"", "left alone: banned by irqbalance's IRQBALANCE_BANNED_INTERRUPTS in ENV"},
				29: {"", "left alone: banned by irqbalance's IRQBALANCE_BANNED_INTERRUPTS in ENV"}, 27: {"5", placed + "1"}}},
		{name: "--banmod of the function's driver", env: `IRQBALANCE_ARGS="--banmod=virtio_net"`,
			irqs: map[int]irq{24: {"", "left alone: banned by irqbalance's --banmod=virtio_net in ENV"},
				36: {"", "left alone: banned by irqbalance's --banmod=virtio_net in ENV"}}},
		{name: "-m of the PCI driver, by its module's name", env: `IRQBALANCE_ARGS="-m virtio_pci"`,
			irqs: map[int]irq{25: {"", "left alone: banned by irqbalance's --banmod=virtio_pci in ENV"}}},
		{name: "--banmod of another module", env: `IRQBALANCE_ARGS="--banmod=ixgbe"`,
			irqs: map[int]irq{25: {"4", placed + "0"}}},
		{name: "options warned about", env: "IRQBALANCE_ONESHOT=1\nIRQBALANCE_ARGS='--powerthresh=2 -d'\n",
			irqs: map[int]irq{25: {"4", placed + "0"}},
			warnings: []string{
				"ENV:2: IRQBALANCE_ARGS --powerthresh=2: numairqd never gathers IRQs on fewer CPUs to save power; it spreads them by NUMA distance",
				"ENV:2: IRQBALANCE_ARGS --debug: numairqd's log level is its --log.level flag",
				"ENV:1: IRQBALANCE_ONESHOT: numairqd places IRQs at start and at every change; `numairqd run --oneshot` places them once"}},
		{name: "a rule ignoring IRQs by number", config: "devices:\n  - match: {irq_numbers: \"25,27\"}\n    policy: ignore\n",
			irqs: map[int]irq{25: {"", "ignore: rule at line 2, by IRQ number"}, 27: {"", "ignore: rule at line 2, by IRQ number"},
				26: {"4", placed + "0"}, 29: {"6", placed + "2"}},
			xps: map[int]string{0: "xps follows completion IRQ 26 on CPU 4"}},
		{name: "a rule pinning IRQs by number, the timer too",
			config: "devices:\n  - name: pin\n    match: {irq_numbers: [0, 26, 28]}\n    policy: pinned\n    cpus: 7\n",
			irqs: map[int]irq{26: {"7", `pinned to 7 by rule "pin" (line 2), by IRQ number`}, 28: {"7", `pinned to 7 by rule "pin" (line 2), by IRQ number`},
				0: {"7", `pinned to 7 by rule "pin" (line 2)`}, 25: {"4", placed + "0"}},
			xps: map[int]string{0: "xps follows completion IRQ 26 on CPU 7", 1: "xps follows completion IRQ 28 on CPU 7", 2: "xps follows completion IRQ 30 on CPU 6"}},
		{name: "a ban wins over a rule by number", env: `IRQBALANCE_ARGS=--banirq=26`,
			config: "devices:\n  - match: {irq_numbers: 26}\n    policy: pinned\n    cpus: 7\n",
			irqs:   map[int]irq{26: {"", "left alone: banned by irqbalance's --banirq in ENV"}}},
		{name: "a device rule before a rule by number wins",
			config: "devices:\n  - match: {interface: eth0}\n    policy: linear\n  - match: {irq_numbers: 25}\n    policy: ignore\n",
			irqs:   map[int]irq{25: {"0", "linear: queue 0"}}},
		{name: "a misspelt interface", config: "devices:\n  - match: {interface: eht0}\n    policy: linear\n",
			irqs:     map[int]irq{25: {"4", placed + "0"}},
			warnings: []string{`test.yaml:2: devices[0] matches no device or IRQ here (match interface "eht0"; did you mean eth0?); it applies to any that appear`}},
		{name: "IRQ numbers not here", config: "devices:\n  - match: {irq_numbers: 999, driver: virtio_net}\n    policy: ignore\n",
			warnings: []string{`test.yaml:2: devices[0] matches no device or IRQ here (match driver "virtio_net", irq_numbers 999); it applies to any that appear`}},
		{name: "a banned CPU that does not exist", config: "banned_cpus: \"7,12,999\"\n",
			irqs:     map[int]irq{25: {"4", placed + "0"}, 29: {"6", placed + "2"}},
			warnings: []string{"test.yaml: banned_cpus: CPUs 999 do not exist here (possible CPUs 0-15); banned should they appear"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := fourNodes()
			m.Possible = "0-15"
			f := newFixture(t, m)
			f.virtio("0000:41:00.0", 0, 6, 24, 2)
			env := f.tree.Path("etc/default/irqbalance")
			f.tree.WriteFile("etc/default/irqbalance", tc.env+"\n")
			cfg := parseConfig(t, tc.config)
			mc, err := machine.Read(machine.Roots{Sys: f.tree.Sys(), Proc: f.tree.Proc(), Etc: f.tree.Path("etc")}, cfg)
			if err != nil || mc.BansErr != nil {
				t.Fatal(err, mc.BansErr)
			}
			p := policy.Compute(mc.Snapshot, mc.Inventory, cfg, mc.ToolBans(), policy.Memory{}, policy.Balancing{})
			s, err := topology.NewFS(f.tree.Sys()).ReadDetail()
			if err != nil {
				t.Fatal(err)
			}
			got := append(slices.Clone(mc.Bans.Ignored), policy.Warnings(mc.Inventory, cfg, s.Possible())...)
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], env, "ENV")
			}
			if !slices.Equal(got, tc.warnings) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.warnings, "\n"))
			}
			planned := map[int]policy.IRQ{}
			for _, d := range p.Devices {
				for _, q := range d.IRQs {
					planned[q.Number] = q
				}
			}
			for k, want := range tc.xps {
				if tq := device(t, p, "0000:41:00.0").TxQueues[k]; !strings.HasPrefix(tq.Reason, want) {
					t.Errorf("tx queue %d: %s, want %s...", k, tq.Reason, want)
				}
			}
			for n, want := range tc.irqs {
				q, ok := planned[n]
				switch {
				case want.planned == "-":
					if ok {
						t.Errorf("IRQ %d is planned: %+v", n, q)
					}
				case !ok:
					t.Errorf("IRQ %d not in the plan", n)
				case q.Planned.String() != want.planned || !strings.HasPrefix(strings.ReplaceAll(q.Reason, env, "ENV"), want.reason):
					t.Errorf("IRQ %d: planned %q (%s); want %q (%s...)", n, q.Planned, q.Reason, want.planned, want.reason)
				}
			}
		})
	}
}
