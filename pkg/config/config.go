package config

import (
	"fmt"
	"regexp"
	"time"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// Config is one parsed configuration file. Parse and Default return a
// fresh Config that nobody else holds; treat it as immutable from then on
// (never write a field or an element of Devices), so the daemon can hand
// the same *Config to its planner, watcher and HTTP handlers at once and
// replace it wholesale on reload.
type Config struct {
	// BannedCPUs never receive an IRQ (banned_cpus).
	BannedCPUs cpumask.Mask
	// ExcludeIsolated and ExcludeNohzFull also ban the kernel's isolcpus
	// and nohz_full CPUs (exclude_isolated, exclude_nohz_full).
	ExcludeIsolated bool
	ExcludeNohzFull bool
	// Devices are the device rules in file order; the first match wins.
	Devices []Rule

	// Listen is the metrics and HTTP address; "" disables it.
	Listen string
	// ResyncInterval is how often the whole state is re-read even
	// without an event.
	ResyncInterval time.Duration
	// RestoreOnExit puts back the affinities found at start on exit.
	RestoreOnExit bool
	// CoalesceWindow is the quiet time that ends a burst of events
	// (whose first is handled at once); CoalesceMaxDelay bounds how long
	// a steady stream of events can postpone the round that follows.
	CoalesceWindow   time.Duration
	CoalesceMaxDelay time.Duration
	// MetricsPerIRQ exports one series per IRQ, not only per device.
	MetricsPerIRQ bool

	// IrqbalanceEnvFile is irqbalance's environment file whose
	// IRQBALANCE_BANNED_CPUS and IRQBALANCE_BANNED_CPULIST are banned
	// too (cri-o and tuned write them): a path, "auto" for the first of
	// bans.EnvFiles that exists, "" for none.
	IrqbalanceEnvFile string
	// HonorDefaultAffinity bans the CPUs /proc/irq/default_smp_affinity
	// leaves out (cri-o clears a pod's CPUs from it); nil means: when an
	// environment file is in use.
	HonorDefaultAffinity *bool

	// Balance is how devices without a rule's balance share their queues
	// out over the CPUs their policy gives them.
	Balance Balance
	// LoadBalance tunes BalanceLoad.
	LoadBalance LoadBalance

	// Source is the file name the config came from, "" for Default.
	Source string
}

// Defaults, as documented in configs/numairqd.yaml.
const (
	DefaultListen           = "127.0.0.1:9768"
	DefaultResyncInterval   = 60 * time.Second
	DefaultCoalesceWindow   = 100 * time.Millisecond
	DefaultCoalesceMaxDelay = 500 * time.Millisecond

	DefaultIrqbalanceEnvFile = "auto"

	DefaultBalance            = BalanceCount
	DefaultLoadInterval       = 5 * time.Second
	DefaultLoadHalfLife       = 30 * time.Second
	DefaultLoadMinGain        = 0.1
	DefaultLoadMinDrop        = 0.03
	DefaultLoadMinPeak        = 0.1
	DefaultLoadSamples        = 3
	DefaultLoadMovesPerMinute = 6
)

// Bounds Parse enforces on the durations.
const (
	MinResyncInterval = time.Second
	MaxCoalesceWindow = 10 * time.Second
)

// Default returns the configuration an empty file gives: no banned CPUs,
// isolated and nohz_full CPUs excluded, no device rules (every device
// gets PolicyAuto), metrics on DefaultListen.
func Default() *Config {
	return &Config{
		ExcludeIsolated:   true,
		ExcludeNohzFull:   true,
		Listen:            DefaultListen,
		ResyncInterval:    DefaultResyncInterval,
		CoalesceWindow:    DefaultCoalesceWindow,
		CoalesceMaxDelay:  DefaultCoalesceMaxDelay,
		Balance:           DefaultBalance,
		IrqbalanceEnvFile: DefaultIrqbalanceEnvFile,
		LoadBalance: LoadBalance{
			Interval:       DefaultLoadInterval,
			HalfLife:       DefaultLoadHalfLife,
			MinGain:        DefaultLoadMinGain,
			MinDrop:        DefaultLoadMinDrop,
			MinPeak:        DefaultLoadMinPeak,
			Samples:        DefaultLoadSamples,
			MovesPerMinute: DefaultLoadMovesPerMinute,
		},
	}
}

// Balance names how a device's queues are shared out over the CPUs its
// policy gives it.
type Balance string

const (
	// BalanceCount weighs every queue the same: queue i goes to the i-th
	// least-used CPU of the device's spread order, as the kernel's
	// drivers place them at probe.
	BalanceCount Balance = "count"
	// BalanceLoad starts from count's placement and moves busy queues,
	// within the hops count used for each, so that the busiest CPU's
	// measured interrupt load is as low as it can be.
	BalanceLoad Balance = "load"
)

var balances = []Balance{BalanceCount, BalanceLoad}

// LoadBalance tunes BalanceLoad: how loads are sampled and smoothed, and
// how reluctant the daemon is to move a queue.
type LoadBalance struct {
	// Interval is how often /proc/stat and /proc/interrupts are sampled.
	Interval time.Duration
	// HalfLife is the half-life of the exponentially weighted averages
	// of the sampled loads.
	HalfLife time.Duration
	// MinGain is the fraction by which a move must lower the busiest
	// CPU's load; Samples is how many consecutive samples must show
	// that gain before the move is made.
	MinGain float64
	Samples int
	// MinDrop is the least, in CPU-seconds per second, by which a move
	// must lower the busiest CPU's load, whatever fraction that is: a
	// move for less than a few percent of a CPU is not worth the cold
	// caches and reordered packets it costs.
	MinDrop float64
	// MinPeak is the busiest CPU's interrupt load (a fraction of one
	// CPU) below which nothing moves: on a quiet machine no CPU is
	// short of time, however the load is spread.
	MinPeak float64
	// MovesPerMinute bounds the queue moves load balancing makes in any
	// minute.
	MovesPerMinute int
}

// Policy names how a device's IRQs are spread over CPUs.
type Policy string

const (
	// PolicyAuto is PolicyLinear when the device has at least as many
	// queues as allowed CPUs, PolicyNUMAHop otherwise.
	PolicyAuto Policy = "auto"
	// PolicyNUMAHop spreads queues over the device's node first, then
	// over nodes by increasing distance (the kernel's
	// sched_numa_hop_mask / cpumask_local_spread order).
	PolicyNUMAHop Policy = "numa-hop"
	// PolicyLinear gives queue i the i-th allowed CPU in id order.
	PolicyLinear Policy = "linear"
	// PolicyPinned spreads the queues over the rule's CPUs only.
	PolicyPinned Policy = "pinned"
	// PolicyIgnore leaves the device's IRQs as they are.
	PolicyIgnore Policy = "ignore"
)

var policies = []Policy{PolicyAuto, PolicyNUMAHop, PolicyLinear, PolicyPinned, PolicyIgnore}

// MaskMode says what an IRQ's affinity mask holds once a CPU is chosen.
type MaskMode string

const (
	// MaskCPU writes the chosen CPU alone.
	MaskCPU MaskMode = "cpu"
	// MaskCore writes the chosen CPU's whole SMT sibling mask.
	MaskCore MaskMode = "core"
)

var maskModes = []MaskMode{MaskCPU, MaskCore}

// Rule is one entry of devices: the devices it matches and how to place
// their IRQs.
type Rule struct {
	// Name is free text for logs; may be empty.
	Name string
	// Line is the rule's line in Config.Source, for logs.
	Line  int
	Match Match
	// Policy is never empty: PolicyAuto when the file gives none.
	Policy Policy
	// Mask is never empty: MaskCPU when the file gives none.
	Mask MaskMode
	// CPUs is the pinned set; non-empty exactly when Policy is
	// PolicyPinned.
	CPUs cpumask.Mask
	// Node, when set, replaces the device's numa_node; -1 means no
	// node: online CPUs in id order.
	Node *int
	// Balance, when not "", overrides Config.Balance for the rule's
	// devices.
	Balance Balance
	// QueueRegex, when set, finds the queue index in an IRQ name: the
	// text of its group named "queue". It is not anchored: it may match
	// anywhere in the name. Nil leaves the choice to the planner.
	QueueRegex *regexp.Regexp
}

// Match selects devices. Each set field is a regexp matched against the
// whole string (Parse anchors the file's text as ^(?:re)$, so "eth1"
// does not match eth10); every set field must match. The zero Match
// matches every device, but Parse never produces one.
type Match struct {
	PCI       *regexp.Regexp
	Driver    *regexp.Regexp
	Interface *regexp.Regexp
	IRQ       *regexp.Regexp
}

// DeviceFacts is what a rule can match on for one device.
type DeviceFacts struct {
	// PCI is the PCI address, "0000:03:00.0"; "" for a non-PCI device.
	PCI string
	// Drivers, Interfaces and IRQNames are the device's driver names,
	// network interface names and IRQ names (the action names in
	// /proc/interrupts).
	Drivers    []string
	Interfaces []string
	IRQNames   []string
}

// Matches reports whether d satisfies every set field of m: PCI must
// match d.PCI, and Driver, Interface and IRQ must each match at least
// one of d's drivers, interfaces and IRQ names (so a set field never
// matches a device with none).
func (m Match) Matches(d DeviceFacts) bool {
	if m.PCI != nil && !m.PCI.MatchString(d.PCI) {
		return false
	}
	return anyMatch(m.Driver, d.Drivers) &&
		anyMatch(m.Interface, d.Interfaces) &&
		anyMatch(m.IRQ, d.IRQNames)
}

func anyMatch(re *regexp.Regexp, ss []string) bool {
	if re == nil {
		return true
	}
	for _, s := range ss {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

func autoBool(b *bool) string {
	if b == nil {
		return "auto"
	}
	return fmt.Sprint(*b)
}

// WantsLoad reports whether any device may be balanced by load: the
// config's balance or one of its rules says load.
func (c *Config) WantsLoad() bool {
	if c.Balance == BalanceLoad {
		return true
	}
	for i := range c.Devices {
		if c.Devices[i].Balance == BalanceLoad {
			return true
		}
	}
	return false
}

// RuleFor returns the first rule of c.Devices that matches d, and false
// when none does (the device then gets PolicyAuto with default options).
// The returned Rule belongs to c: do not modify it.
func (c *Config) RuleFor(d DeviceFacts) (*Rule, bool) {
	for i := range c.Devices {
		if c.Devices[i].Match.Matches(d) {
			return &c.Devices[i], true
		}
	}
	return nil, false
}

// Summary is a one-line description of c for logs, in the file's key
// names.
func (c *Config) Summary() string {
	src := c.Source
	if src == "" {
		src = "defaults"
	}
	return fmt.Sprintf("config %s: %d device rules, banned_cpus=%q exclude_isolated=%t exclude_nohz_full=%t "+
		"listen=%q resync_interval=%s restore_on_exit=%t coalesce_window=%s coalesce_max_delay=%s metrics_per_irq=%t "+
		"balance=%s load_balance={interval=%s half_life=%s min_gain=%g min_drop=%g min_peak=%g samples=%d moves_per_minute=%d} "+
		"irqbalance_env_file=%q honor_default_smp_affinity=%s",
		src, len(c.Devices), c.BannedCPUs.String(), c.ExcludeIsolated, c.ExcludeNohzFull,
		c.Listen, c.ResyncInterval, c.RestoreOnExit, c.CoalesceWindow, c.CoalesceMaxDelay, c.MetricsPerIRQ,
		c.Balance, c.LoadBalance.Interval, c.LoadBalance.HalfLife, c.LoadBalance.MinGain, c.LoadBalance.MinDrop, c.LoadBalance.MinPeak, c.LoadBalance.Samples,
		c.LoadBalance.MovesPerMinute, c.IrqbalanceEnvFile, autoBool(c.HonorDefaultAffinity))
}
