package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

const testFile = "/etc/numairqd/numairqd.yaml"

// doc joins lines into a file, so a case's line numbers can be counted.
func doc(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

func TestParseDefaults(t *testing.T) {
	for name, input := range map[string]string{
		"empty":         "",
		"blank":         "\n\n  \n",
		"comments only": "# nothing here\n# at all\n",
		"bare document": "---\n",
		"null devices":  "devices:\n",
	} {
		t.Run(name, func(t *testing.T) {
			c, err := Parse(testFile, []byte(input))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := Default()
			want.Source = testFile
			if got, want := c.Summary(), want.Summary(); got != want {
				t.Errorf("Summary\n got %s\nwant %s", got, want)
			}
			if len(c.Devices) != 0 || !c.BannedCPUs.IsEmpty() {
				t.Errorf("got devices %v, banned %v; want none", c.Devices, c.BannedCPUs)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	c := Default()
	if c.Mode != ModeEnforce || !c.WatchConfig || !c.ExcludeIsolated || !c.ExcludeNohzFull || !c.IsolatedPartitions || c.RestoreOnExit || c.MetricsPerIRQ ||
		c.Listen != "127.0.0.1:9768" || c.ResyncInterval != time.Minute ||
		c.CoalesceWindow != 100*time.Millisecond || c.CoalesceMaxDelay != 500*time.Millisecond ||
		c.Source != "" || !c.BannedCPUs.IsEmpty() || c.Devices != nil {
		t.Errorf("Default() = %+v", c)
	}
	if Default() == c {
		t.Error("Default returned a shared Config")
	}
	const want = `config defaults: 0 device rules, mode=enforce watch_config=true banned_cpus="" exclude_isolated=true exclude_nohz_full=true isolated_partitions=true listen="127.0.0.1:9768" resync_interval=1m0s restore_on_exit=false coalesce_window=100ms ` +
		`coalesce_max_delay=500ms metrics_per_irq=false ` +
		`balance=count xps=follow napi_threads=follow load_balance={interval=5s half_life=30s min_gain=0.1 min_drop=0.03 min_peak=0.1 samples=3 moves_per_minute=6 queue_counters=auto} ` +
		`irqbalance_env_file="auto" honor_default_smp_affinity=auto`
	if got := c.Summary(); got != want {
		t.Errorf("Summary\n got %s\nwant %s", got, want)
	}
}

func TestParseValid(t *testing.T) {
	tests := []struct {
		name  string
		input string
		check func(t *testing.T, c *Config)
	}{
		{"banned_cpus list", `banned_cpus: "0-3,8"`, func(t *testing.T, c *Config) {
			if !c.BannedCPUs.Equal(cpumask.New(0, 1, 2, 3, 8)) {
				t.Errorf("BannedCPUs = %v", c.BannedCPUs)
			}
		}},
		{"banned_cpus unquoted list", `banned_cpus: 0-1`, func(t *testing.T, c *Config) {
			if !c.BannedCPUs.Equal(cpumask.New(0, 1)) {
				t.Errorf("BannedCPUs = %v", c.BannedCPUs)
			}
		}},
		{"banned_cpus int", `banned_cpus: 5`, func(t *testing.T, c *Config) {
			if !c.BannedCPUs.Equal(cpumask.New(5)) {
				t.Errorf("BannedCPUs = %v", c.BannedCPUs)
			}
		}},
		{"observe, no config watch", "mode: observe\nwatch_config: false", func(t *testing.T, c *Config) {
			if c.Mode != ModeObserve || c.WatchConfig {
				t.Errorf("Mode %q WatchConfig %t, want observe and false", c.Mode, c.WatchConfig)
			}
		}},
		{"exclude flags off", "exclude_isolated: false\nexclude_nohz_full: false", func(t *testing.T, c *Config) {
			if c.ExcludeIsolated || c.ExcludeNohzFull {
				t.Errorf("ExcludeIsolated %v ExcludeNohzFull %v", c.ExcludeIsolated, c.ExcludeNohzFull)
			}
		}},
		{"balance load", "balance: load\nload_balance:\n  interval: 2s\n  half_life: 1m\n  min_gain: 0.25\n  min_drop: 0.05\n  min_peak: 0.2\n  samples: 5\n  moves_per_minute: 2\n  queue_counters: off",
			func(t *testing.T, c *Config) {
				want := LoadBalance{Interval: 2 * time.Second, HalfLife: time.Minute, MinGain: 0.25, MinDrop: 0.05, MinPeak: 0.2, Samples: 5, MovesPerMinute: 2, QueueCounters: QueueCountersOff}
				if c.Balance != BalanceLoad || c.LoadBalance != want {
					t.Errorf("Balance %q, LoadBalance %+v; want load, %+v", c.Balance, c.LoadBalance, want)
				}
			}},
		{"load_balance partial and min_gain 0", "load_balance:\n  min_gain: 0", func(t *testing.T, c *Config) {
			want := Default().LoadBalance
			want.MinGain = 0
			if c.Balance != BalanceCount || c.LoadBalance != want {
				t.Errorf("Balance %q, LoadBalance %+v; want defaults with min_gain 0", c.Balance, c.LoadBalance)
			}
		}},
		{"load_balance empty", "load_balance:", func(t *testing.T, c *Config) {
			if c.LoadBalance != Default().LoadBalance {
				t.Errorf("LoadBalance %+v, want the defaults", c.LoadBalance)
			}
		}},
		{"irqbalance env file", "irqbalance_env_file: /etc/default/irqbalance\nhonor_default_smp_affinity: false", func(t *testing.T, c *Config) {
			if c.IrqbalanceEnvFile != "/etc/default/irqbalance" || c.HonorDefaultAffinity == nil || *c.HonorDefaultAffinity {
				t.Errorf("IrqbalanceEnvFile %q, HonorDefaultAffinity %v", c.IrqbalanceEnvFile, c.HonorDefaultAffinity)
			}
		}},
		{"irqbalance env file off, honor auto", "irqbalance_env_file: \"\"\nhonor_default_smp_affinity: auto", func(t *testing.T, c *Config) {
			if c.IrqbalanceEnvFile != "" || c.HonorDefaultAffinity != nil {
				t.Errorf("IrqbalanceEnvFile %q, HonorDefaultAffinity %v", c.IrqbalanceEnvFile, c.HonorDefaultAffinity)
			}
		}},
		{"isolated partitions off", "isolated_partitions: false", func(t *testing.T, c *Config) {
			if c.IsolatedPartitions || !c.ExcludeIsolated || !c.ExcludeNohzFull {
				t.Errorf("IsolatedPartitions %t ExcludeIsolated %t ExcludeNohzFull %t, want only the first off", c.IsolatedPartitions, c.ExcludeIsolated, c.ExcludeNohzFull)
			}
		}},
		{"rule balance", "devices:\n  - match: {driver: nvme}\n    balance: load", func(t *testing.T, c *Config) {
			if len(c.Devices) != 1 || c.Devices[0].Balance != BalanceLoad {
				t.Errorf("Devices %+v, want one rule with balance load", c.Devices)
			}
		}},
		{"listen", `listen: "[::1]:9100"`, func(t *testing.T, c *Config) {
			if c.Listen != "[::1]:9100" {
				t.Errorf("Listen = %q", c.Listen)
			}
		}},
		{"listen all interfaces", `listen: ":9768"`, func(t *testing.T, c *Config) {
			if c.Listen != ":9768" {
				t.Errorf("Listen = %q", c.Listen)
			}
		}},
		{"listen disabled", `listen: ""`, func(t *testing.T, c *Config) {
			if c.Listen != "" {
				t.Errorf("Listen = %q", c.Listen)
			}
		}},
		{"durations and flags", doc(
			"resync_interval: 1s",
			"restore_on_exit: true",
			"coalesce_window: 10s",
			"coalesce_max_delay: 1m",
			"metrics_per_irq: true",
		), func(t *testing.T, c *Config) {
			if c.ResyncInterval != time.Second || !c.RestoreOnExit || c.CoalesceWindow != 10*time.Second ||
				c.CoalesceMaxDelay != time.Minute || !c.MetricsPerIRQ {
				t.Errorf("got %+v", c)
			}
		}},
		{"max delay equal to window", "coalesce_window: 500ms\ncoalesce_max_delay: 500ms", func(t *testing.T, c *Config) {
			if c.CoalesceWindow != c.CoalesceMaxDelay {
				t.Errorf("got %v, %v", c.CoalesceWindow, c.CoalesceMaxDelay)
			}
		}},
		{"rule defaults", doc(
			"devices:",
			"  - match: {driver: ixgbe}",
		), func(t *testing.T, c *Config) {
			r := c.Devices[0]
			if r.Policy != PolicyAuto || r.Mask != MaskCPU || r.Node != nil || r.QueueRegex != nil ||
				!r.CPUs.IsEmpty() || r.Name != "" || r.Line != 2 || r.Match.Driver == nil ||
				r.Match.PCI != nil || r.Match.Interface != nil || r.Match.IRQ != nil {
				t.Errorf("rule = %+v", r)
			}
		}},
		{"rule every key", doc(
			"devices:",
			"  - name: first",
			"    match:",
			"      pci: '0000:3b:00\\.0'",
			"      driver: mlx5_core",
			"      interface: eth[0-9]+",
			"      irq: mlx5_comp[0-9]+@.*",
			"    policy: pinned",
			"    mask: core",
			"    cpus: 2-3",
			"    node: -1",
			"    queue_regex: comp(?P<queue>[0-9]+)",
			"  - match: {pci: x}",
			"    policy: ignore",
			"    node: 3",
		), func(t *testing.T, c *Config) {
			if len(c.Devices) != 2 {
				t.Fatalf("got %d rules", len(c.Devices))
			}
			r := c.Devices[0]
			if r.Name != "first" || r.Line != 2 || r.Policy != PolicyPinned || r.Mask != MaskCore ||
				!r.CPUs.Equal(cpumask.New(2, 3)) || r.Node == nil || *r.Node != -1 {
				t.Errorf("rule 0 = %+v", r)
			}
			if m := r.QueueRegex.FindStringSubmatch("mlx5_comp12@pci:0000:3b:00.0"); m == nil || m[r.QueueRegex.SubexpIndex("queue")] != "12" {
				t.Errorf("queue_regex found %q", m)
			}
			d := DeviceFacts{PCI: "0000:3b:00.0", Drivers: []string{"mlx5_core"}, Interfaces: []string{"eth0"}, IRQNames: []string{"mlx5_comp0@pci:0000:3b:00.0"}}
			if !r.Match.matches(d) {
				t.Errorf("rule 0 does not match %+v", d)
			}
			if r := c.Devices[1]; r.Policy != PolicyIgnore || r.Line != 13 || *r.Node != 3 {
				t.Errorf("rule 1 = %+v", r)
			}
		}},
		{"policies", doc(
			"devices:",
			"  - {match: {driver: a}, policy: auto}",
			"  - {match: {driver: b}, policy: numa-hop}",
			"  - {match: {driver: c}, policy: linear}",
			"  - {match: {driver: d}, policy: pinned, cpus: 1}",
			"  - {match: {driver: e}, policy: ignore, mask: cpu}",
		), func(t *testing.T, c *Config) {
			want := []Policy{PolicyAuto, PolicyNUMAHop, PolicyLinear, PolicyPinned, PolicyIgnore}
			for i, r := range c.Devices {
				if r.Policy != want[i] {
					t.Errorf("rule %d policy %q, want %q", i, r.Policy, want[i])
				}
			}
		}},
		{"anchor and alias", doc(
			"devices:",
			"  - match: &mlx {driver: mlx5_core}",
			"    policy: linear",
			"  - match: *mlx",
		), func(t *testing.T, c *Config) {
			if len(c.Devices) != 2 || c.Devices[1].Match.Driver == nil || c.Devices[1].Policy != PolicyAuto {
				t.Errorf("rules = %+v", c.Devices)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(testFile, []byte(tt.input))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if c.Source != testFile {
				t.Errorf("Source = %q", c.Source)
			}
			tt.check(t, c)
		})
	}
}

// TestParseInvalid checks each error names the file, the line and the key
// path, and that nothing is returned.
func TestParseInvalid(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string // the whole message after "<file>:"
	}{
		{"reversed banned_cpus", doc(
			"# banned",
			"exclude_isolated: true",
			`banned_cpus: "3-1"`,
		), `3: banned_cpus: invalid CPU mask list "3-1": reversed range "3-1"`},
		{"banned_cpus not a list", `banned_cpus: "all"`,
			`1: banned_cpus: invalid CPU mask list "all": element "all": "all" is not a CPU number`},
		{"banned_cpus negative int", `banned_cpus: -1`,
			`1: banned_cpus: invalid CPU mask list "-1": element "-1": missing CPU number`},
		{"banned_cpus list type", "banned_cpus:\n  - 1\n  - 2",
			`2: banned_cpus: got a list (want a CPU list like "0-3,8")`},
		{"bool as string", `exclude_isolated: "yes"`,
			`1: exclude_isolated: got string "yes" (want true or false)`},
		{"bool as yaml 1.1 yes", `exclude_nohz_full: yes`,
			`1: exclude_nohz_full: got string "yes" (want true or false)`},
		{"bool as int", `restore_on_exit: 1`,
			`1: restore_on_exit: got integer 1 (want true or false)`},
		{"unknown mode", `mode: dry-run`,
			`1: mode: unknown mode "dry-run" (want one of enforce, observe)`},
		{"watch_config as string", `watch_config: "no"`,
			`1: watch_config: got string "no" (want true or false)`},
		{"metrics_per_irq null", `metrics_per_irq:`,
			`1: metrics_per_irq: got no value (want true or false)`},
		{"unknown top-level key", doc(
			"listen: ':1'",
			"banned_cpu: 3",
		), `2: banned_cpu: unknown key; did you mean banned_cpus? (want one of mode, watch_config, banned_cpus, exclude_isolated, exclude_nohz_full, ... metrics_per_irq, balance, xps, napi_threads, load_balance, irqbalance_env_file, honor_default_smp_affinity)`},
		{"unknown key far from any", "colour: true",
			`1: colour: unknown key (want one of mode, watch_config, banned_cpus,`},
		{"misspelt load_balance key", "load_balance:\n  halflife: 1m",
			`2: load_balance.halflife: unknown key; did you mean half_life? (want one of interval,`},
		{"hex mask with 0x", `banned_cpus: 0x0f`,
			`1: banned_cpus: "0x0f" looks like a hex mask; numairqd takes CPU lists like 0-3; hex mask 0x0f is CPUs 0-3 (want a CPU list like "0-3,8")`},
		{"hex mask without 0x", `banned_cpus: f0`,
			`1: banned_cpus: "f0" looks like a hex mask; numairqd takes CPU lists like 0-3; hex mask f0 is CPUs 4-7 (want a CPU list like "0-3,8")`},
		{"hex mask in the kernel's groups", `banned_cpus: "1,0000000f"`,
			`1: banned_cpus: "1,0000000f" looks like a hex mask; numairqd takes CPU lists like 0-3; hex mask 1,0000000f is CPUs 0-3,32`},
		{"kernel hex groups with a letter", `banned_cpus: "ff,00000000"`,
			`1: banned_cpus: "ff,00000000" looks like a hex mask; numairqd takes CPU lists like 0-3; hex mask ff,00000000 is CPUs 32-39 (want a CPU list like "0-3,8")`},
		{"hex mask of more than 32 CPUs, ungrouped", `banned_cpus: 0xff00000000`,
			`1: banned_cpus: "0xff00000000" looks like a hex mask; numairqd takes CPU lists like 0-3; hex mask 0xff00000000 is CPUs 32-39`},
		{"hex mask of no CPU", `banned_cpus: 0x0`,
			`1: banned_cpus: "0x0" looks like a hex mask; numairqd takes CPU lists like 0-3; hex mask 0x0 is no CPU`},
		{"pinned cpus as a hex mask", "devices:\n  - match: {driver: a}\n    policy: pinned\n    cpus: 0xf0",
			`4: devices[0].cpus: "0xf0" looks like a hex mask; numairqd takes CPU lists like 0-3; hex mask 0xf0 is CPUs 4-7`},
		{"tab indents a line", doc(
			"listen: ''",
			"banned_cpus: 1",
			"load_balance:",
			"\tinterval: 5s",
		), `4: invalid YAML: a tab character indents this line; YAML allows spaces only (want spaces; the parser said: found character that cannot start any token)`},
		{"a tab far from the parser's error is not its cause", doc(
			"listen: ''",
			"banned_cpus: `1`",
			"load_balance:",
			"\t# a comment indented with a tab",
		), "2: invalid YAML: found character that cannot start any token"},
		{"tab after spaces in a rule", doc(
			"devices:",
			"  - match:",
			"  \t  driver: a",
		), `3: invalid YAML: a tab character indents this line; YAML allows spaces only`},
		{"tab the parser reports a line early", doc(
			"listen: ''",
			"banned_cpus: 1",
			"\t",
			"devices:",
			"\t- match: {driver: a}",
		), `5: invalid YAML: a tab character indents this line; YAML allows spaces only (want spaces; the parser said: found a tab character that violates indentation)`},
		{"boolean misspelt", `exclude_isolated: ture`,
			`1: exclude_isolated: got string "ture"; did you mean true? (want true or false)`},
		{"honor misspelt", `honor_default_smp_affinity: auot`,
			`1: honor_default_smp_affinity: got string "auot"; did you mean auto? (want true, false or auto)`},
		{"xps misspelt", `xps: folow`,
			`1: xps: unknown xps mode "folow"; did you mean follow? (want one of follow, leave)`},
		{"queue_counters misspelt", "load_balance:\n  queue_counters: Auto",
			`2: load_balance.queue_counters: unknown queue counters mode "Auto"; did you mean auto? (want one of`},
		{"env file relative", `irqbalance_env_file: etc/irqbalance`,
			`1: irqbalance_env_file: "etc/irqbalance" is not an absolute path (want an absolute path, "auto"`},
		{"honor not a bool", `honor_default_smp_affinity: sometimes`,
			`1: honor_default_smp_affinity: got string "sometimes" (want true, false or auto)`},
		{"balance unknown", `balance: weight`,
			`1: balance: unknown balance "weight" (want one of count, load)`},
		{"load_balance not a mapping", `load_balance: 5s`,
			`1: load_balance: got string "5s" (want a mapping of interval, half_life, min_gain, min_drop, min_peak, samples, moves_per_minute, queue_counters)`},
		{"load_balance interval too short", "load_balance:\n  interval: 100ms",
			`2: load_balance.interval: 100ms is too short (want at least 1s)`},
		{"load_balance interval too long", "load_balance:\n  interval: 1h",
			`2: load_balance.interval: 1h0m0s is out of range (want more than 0 and at most 10m0s)`},
		{"load_balance min_drop below its floor", "load_balance:\n  min_drop: 0.001",
			`2: load_balance.min_drop: 0.001 is below 0.005 (half a percent of a CPU, the least the planner moves for)`},
		{"load_balance min_drop 1", "load_balance:\n  min_drop: 1",
			`2: load_balance.min_drop: 1 is out of range`},
		{"load_balance min_gain 1", "load_balance:\n  min_gain: 1",
			`2: load_balance.min_gain: 1 is out of range (want a number from 0 up to, not including, 1, such as 0.1)`},
		{"load_balance min_gain nan", "load_balance:\n  min_gain: .nan",
			`2: load_balance.min_gain: .nan is out of range`},
		{"load_balance min_gain string", "load_balance:\n  min_gain: lots",
			`2: load_balance.min_gain: got string "lots" (want a number`},
		{"load_balance samples 0", "load_balance:\n  samples: 0",
			`2: load_balance.samples: 0 is out of range (want an integer from 1 to 1000)`},
		{"load_balance moves huge", "load_balance:\n  moves_per_minute: 99999999999999999999",
			`2: load_balance.moves_per_minute: got number 99999999999999999999 (want an integer from 1 to 10000)`},
		{"load_balance queue_counters unknown", "load_balance:\n  queue_counters: on",
			`2: load_balance.queue_counters: unknown queue counters mode "on" (want one of auto, off)`},
		{"load_balance unknown key", "load_balance:\n  budget: 3",
			`2: load_balance.budget: unknown key (want one of interval, half_life, min_gain, min_drop, min_peak, samples, moves_per_minute, queue_counters)`},
		{"rule balance unknown", "devices:\n  - match: {driver: x}\n    balance: even",
			`3: devices[0].balance: unknown balance "even" (want one of count, load)`},
		{"duplicate key", doc(
			"listen: ':1'",
			"listen: ':2'",
		), `2: listen: duplicate key, first at line 1 (want each key once)`},
		{"not a mapping", `just a string`,
			`1: got string "just a string" (want a mapping of settings)`},
		{"devices string", `devices: eth0`,
			`1: devices: got string "eth0" (want a list of rules)`},
		{"devices mapping", "devices:\n  match: {driver: x}",
			`2: devices: got a mapping (want a list of rules)`},
		{"rule not a mapping", "devices:\n  - eth0",
			`2: devices[0]: got string "eth0" (want a rule: a mapping with match and policy)`},
		{"unknown key in rule", doc(
			"devices:",
			"  - match: {driver: x}",
			"  - match: {driver: y}",
			"    polcy: linear",
		), `4: devices[1].polcy: unknown key; did you mean policy? (want one of name, match, policy, mask, balance, xps, napi_threads, cpus, node, queue_regex)`},
		{"unknown key in match", doc(
			"devices:",
			"  - match:",
			"      drivers: x",
		), `3: devices[0].match.drivers: unknown key; did you mean driver? (want one of pci, driver, interface, irq, irq_numbers)`},
		{"bad policy", doc(
			"devices:",
			"  - match: {driver: a}",
			"  - match: {driver: b}",
			"",
			"",
			"    # numa hop",
			"    policy: numa_hop",
		), `7: devices[1].policy: unknown policy "numa_hop"; did you mean numa-hop? (want one of auto, numa-hop, linear, pinned, ignore)`},
		{"policy far from any", "devices:\n  - match: {driver: a}\n    policy: spread",
			`3: devices[0].policy: unknown policy "spread" (want one of auto, numa-hop, linear, pinned, ignore)`},
		{"mask misspelt", "devices:\n  - match: {driver: a}\n    mask: cores",
			`3: devices[0].mask: unknown mask mode "cores"; did you mean core? (want one of cpu, core)`},
		{"bad mask", "devices:\n  - match: {driver: a}\n    mask: thread",
			`3: devices[0].mask: unknown mask mode "thread" (want one of cpu, core)`},
		{"missing match", "devices:\n  - policy: linear",
			`2: devices[0].match: missing (want a mapping with at least one of pci, driver, interface, irq, irq_numbers)`},
		{"empty match", "devices:\n  - match: {}",
			`2: devices[0].match: no keys (want a mapping with at least one of pci, driver, interface, irq, irq_numbers)`},
		{"match list", "devices:\n  - match: [driver]",
			`2: devices[0].match: got a list (want a mapping with at least one of pci, driver, interface, irq, irq_numbers)`},
		{"bad match regexp", "devices:\n  - match:\n      interface: 'eth(0'",
			"3: devices[0].match.interface: invalid regexp \"eth(0\": error parsing regexp: missing closing ): `eth(0` (want a Go regexp)"},
		{"match regexp not a string", "devices:\n  - match:\n      irq: 42",
			`3: devices[0].match.irq: got integer 42 (want a regexp string)`},
		{"pinned without cpus", doc(
			"devices:",
			"  - match: {driver: a}",
			"    policy: pinned",
		), `3: devices[0].cpus: missing for policy pinned (want a CPU list like "0-3,8")`},
		{"pinned with empty cpus", doc(
			"devices:",
			"  - match: {driver: a}",
			"    policy: pinned",
			`    cpus: ""`,
		), `4: devices[0].cpus: empty CPU list (want at least one CPU, as a CPU list like "0-3,8")`},
		{"cpus without pinned", doc(
			"devices:",
			"  - match: {driver: a}",
			"    policy: numa-hop",
			"    cpus: 0-3",
		), `4: devices[0].cpus: not allowed with policy numa-hop (want policy pinned, or no cpus)`},
		{"cpus without policy", doc(
			"devices:",
			"  - match: {driver: a}",
			"    cpus: 0-3",
		), `3: devices[0].cpus: not allowed with policy auto (want policy pinned, or no cpus)`},
		{"cpus list type", doc(
			"devices:",
			"  - match: {driver: a}",
			"    policy: pinned",
			"    cpus: [0, 1]",
		), `4: devices[0].cpus: got a list (want a CPU list like "0-3,8")`},
		{"bad cpus", doc(
			"devices:",
			"  - match: {driver: a}",
			"    policy: pinned",
			"    cpus: 0-99999",
		), `4: devices[0].cpus: invalid CPU mask list "0-99999": element "0-99999": CPU 99999 is beyond the limit of 8192 CPUs`},
		{"node below -1", "devices:\n  - match: {driver: a}\n    node: -2",
			`3: devices[0].node: -2 is out of range (want an integer >= -1, -1 for no node)`},
		{"node string", "devices:\n  - match: {driver: a}\n    node: local",
			`3: devices[0].node: got string "local" (want an integer >= -1, -1 for no node)`},
		{"queue_regex without group", "devices:\n  - match: {driver: a}\n    queue_regex: 'q([0-9]+)'",
			`3: devices[0].queue_regex: regexp "q([0-9]+)" has no group named "queue" (want a Go regexp with a group named "queue", such as "-(?P<queue>[0-9]+)$")`},
		{"queue_regex invalid", "devices:\n  - match: {driver: a}\n    queue_regex: '(?P<queue>[0-9]+'",
			"3: devices[0].queue_regex: invalid regexp \"(?P<queue>[0-9]+\": error parsing regexp: missing closing ): `(?P<queue>[0-9]+` (want a Go regexp with a group named \"queue\", such as \"-(?P<queue>[0-9]+)$\")"},
		{"name not a string", "devices:\n  - match: {driver: a}\n    name: [x]",
			`3: devices[0].name: got a list (want a string)`},
		{"listen without port", `listen: localhost`,
			`1: listen: invalid address "localhost": missing port in address (want host:port such as "127.0.0.1:9768", or "" to disable)`},
		{"listen bad port", `listen: "127.0.0.1:99999"`,
			`1: listen: invalid address "127.0.0.1:99999": port "99999" is not a number from 0 to 65535 (want host:port such as "127.0.0.1:9768", or "" to disable)`},
		{"listen int", `listen: 9768`,
			`1: listen: got integer 9768 (want host:port such as "127.0.0.1:9768", or "" to disable)`},
		{"resync_interval too short", "\nresync_interval: 500ms",
			`2: resync_interval: 500ms is too short (want at least 1s)`},
		{"resync_interval no unit", `resync_interval: "60"`,
			`1: resync_interval: missing unit in duration "60" (want a Go duration like "60s" or "100ms")`},
		{"resync_interval unknown unit", `resync_interval: 5min`,
			`1: resync_interval: unknown unit "min" in duration "5min" (want a Go duration like "60s" or "100ms")`},
		{"resync_interval int", `resync_interval: 60`,
			`1: resync_interval: got integer 60 (want a Go duration like "60s" or "100ms")`},
		{"coalesce_window zero", `coalesce_window: 0s`,
			`1: coalesce_window: 0s is out of range (want more than 0 and at most 10s)`},
		{"coalesce_window too long", `coalesce_window: 11s`,
			`1: coalesce_window: 11s is out of range (want more than 0 and at most 10s)`},
		{"coalesce_max_delay negative", `coalesce_max_delay: -1s`,
			`1: coalesce_max_delay: -1s is out of range (want more than 0)`},
		{"coalesce_max_delay below window", "coalesce_window: 200ms\ncoalesce_max_delay: 150ms",
			`2: coalesce_max_delay: 150ms is shorter than coalesce_window 200ms (want coalesce_max_delay >= coalesce_window)`},
		{"coalesce_window above default max delay", "\n\ncoalesce_window: 1s",
			`3: coalesce_max_delay: 500ms is shorter than coalesce_window 1s (want coalesce_max_delay >= coalesce_window)`},
		{"two documents", "listen: ':1'\n---\nlisten: ':2'\n",
			`2: a second YAML document (want exactly one document)`},
		{"trailing document marker", "listen: ':1'\n---\n",
			`2: a second YAML document (want exactly one document)`},
		{"syntax error", "listen: ':1'\ndevices: [\n",
			`2: invalid YAML: did not find expected node content`},
		{"non-string key", "devices:\n  - match: {driver: a}\n    1: x",
			`3: devices[0]: key is integer 1 (want one of name, match, policy, mask, balance, xps, napi_threads, cpus, node, queue_regex)`},
		{"merge key", "devices:\n  - match: &m {driver: a}\n  - match:\n      <<: *m",
			`4: devices[1].match.<<: merge keys are not supported (want the keys written out, or an alias for the whole value)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(testFile, []byte(tt.input))
			if err == nil {
				t.Fatalf("Parse succeeded: %s", c.Summary())
			}
			if c != nil {
				t.Errorf("Parse returned a Config with its error")
			}
			if !invalid(err) {
				t.Errorf("error holds no *Error: %v", err)
			}
			first := strings.SplitN(err.Error(), "\n", 2)[0]
			if want := testFile + ":" + tt.want; !strings.HasPrefix(first, want) {
				t.Errorf("error\n got %s\nwant %s", err, want)
			}
		})
	}
}

// invalid reports whether err holds an *Error: Parse's sign of a file
// read but not accepted, as against a read error.
func invalid(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

func TestParseCollectsAllErrors(t *testing.T) {
	input := doc(
		"devices:",
		"  - match: {driver: '('}",
		"    policy: numa_hop",
		"banned_cpus: 3-1",
		"typo: 1",
		"coalesce_window: 0s",
	)
	_, err := Parse(testFile, []byte(input))
	if err == nil {
		t.Fatal("Parse succeeded")
	}
	lines := strings.Split(err.Error(), "\n")
	wantPrefixes := []string{
		testFile + ":2: devices[0].match.driver: invalid regexp",
		testFile + ":3: devices[0].policy: unknown policy",
		testFile + ":4: banned_cpus: invalid CPU mask list",
		testFile + ":5: typo: unknown key",
		testFile + ":6: coalesce_window: 0s is out of range",
	}
	if len(lines) != len(wantPrefixes) {
		t.Fatalf("got %d errors, want %d:\n%v", len(lines), len(wantPrefixes), err)
	}
	for i, w := range wantPrefixes {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("error %d\n got %s\nwant %s...", i, lines[i], w)
		}
	}
	var e *Error
	if !errors.As(err, &e) || e.Line != 2 || e.Path != "devices[0].match.driver" {
		t.Errorf("errors.As gave %+v", e)
	}
	if !errors.Is(err, kernfs.ErrMalformed) {
		t.Errorf("the banned_cpus error does not wrap kernfs.ErrMalformed")
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("banned_cpus: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(good)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.Source != good || !c.BannedCPUs.Equal(cpumask.New(0)) {
		t.Errorf("Load gave %s", c.Summary())
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("\nbanned_cpus: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.HasPrefix(err.Error(), bad+":2: banned_cpus: ") {
		t.Errorf("Load(bad) error = %v", err)
	}

	missing := filepath.Join(dir, "missing.yaml")
	c, err = Load(missing)
	if c != nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load(missing) = %v, %v; want fs.ErrNotExist naming the path", c, err)
	}
	if invalid(err) {
		t.Errorf("a read error holds an *Error")
	}
}

// uncommented is the example file with its settings put back, as a
// user would by deleting their "#": a setting is "#key:" with no space
// (prose is "# ..."), and the lines of a block it opens ("#devices:",
// "#load_balance:") are "#" and the indented line, through blank lines,
// until the next line that is neither.
func uncommented(b []byte) string {
	setting := regexp.MustCompile(`^#[a-z_]+:`)
	var out []string
	inBlock := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case setting.MatchString(l):
			l = l[1:]
			inBlock = strings.HasSuffix(l, ":")
		case inBlock && strings.HasPrefix(l, "#  "):
			l = l[1:]
		case inBlock && l == "":
		default:
			inBlock = false
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// TestExampleFileIsInert: the shipped example sets nothing (a package
// install must change no placement): it parses to Default with no rule.
func TestExampleFileIsInert(t *testing.T) {
	path := filepath.Join("..", "..", "configs", "numairqd.yaml")
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	want := Default()
	want.Source = path
	if got, want := c.Summary(), want.Summary(); got != want || len(c.Devices) != 0 {
		t.Errorf("example sets something\n got %s (%d rules)\nwant %s", got, len(c.Devices), want)
	}
}

// TestExampleFileParses: uncommented, the example shows every default
// and its rules work as their comments say.
func TestExampleFileParses(t *testing.T) {
	path := filepath.Join("..", "..", "configs", "numairqd.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(path, []byte(uncommented(b)))
	if err != nil {
		t.Fatalf("the example uncommented: %v", err)
	}
	// Apart from its rules it must equal Default.
	want := Default()
	want.Source = path
	want.Devices = c.Devices
	if got, want := c.Summary(), want.Summary(); got != want {
		t.Errorf("example is not all defaults\n got %s\nwant %s", got, want)
	}
	if len(c.Devices) < 5 {
		t.Fatalf("example has %d rules, want at least 5", len(c.Devices))
	}
	if r, ok := c.IRQRule(DeviceFacts{PCI: "0000:01:00.0"}, 25, "eth0-TxRx-0"); !ok || r.Name != "IRQ 25 stays" || r.Policy != PolicyIgnore {
		t.Errorf("IRQRule(IRQ 25) = %+v, %v; want the example's rule by number", r, ok)
	}
	tests := []struct {
		d          DeviceFacts
		wantName   string
		wantPolicy Policy
	}{
		{DeviceFacts{PCI: "0000:3b:00.0", Drivers: []string{"mlx5_core"}, Interfaces: []string{"ens3f0np0"}}, "mlx5 NICs", PolicyNUMAHop},
		{DeviceFacts{PCI: "0000:5e:00.0", Drivers: []string{"nvme"}}, "NVMe on socket 0", PolicyPinned},
		{DeviceFacts{PCI: "0000:af:00.1", Drivers: []string{"ice"}}, "managed elsewhere", PolicyIgnore},
		{DeviceFacts{PCI: "0000:d8:00.0", Drivers: []string{"i40e"}, Interfaces: []string{"ens1f0"}, IRQNames: []string{"ens1f0-rxtx-3"}}, "ens1 queues", PolicyAuto},
	}
	for _, tt := range tests {
		r, ok := c.RuleFor(tt.d)
		if !ok || r.Name != tt.wantName || r.Policy != tt.wantPolicy {
			t.Errorf("RuleFor(%+v) = %+v, %v; want %q with %s", tt.d, r, ok, tt.wantName, tt.wantPolicy)
		}
	}
	seen := map[string]bool{}
	for _, r := range c.Devices {
		seen["policy "+string(r.Policy)] = true
		seen["mask "+string(r.Mask)] = true
		if r.QueueRegex != nil {
			seen["queue_regex"] = true
		}
		if r.Node != nil {
			seen["node"] = true
		}
	}
	for _, k := range []string{"policy numa-hop", "policy pinned", "policy ignore", "mask core", "queue_regex", "node"} {
		if !seen[k] {
			t.Errorf("example has no rule with %s", k)
		}
	}
}
