package config

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// Config is one parsed configuration file. Treat it as immutable once
// Parse or Default returns it (never write a field or an element of
// Devices): the daemon shares it between goroutines and replaces it whole.
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
	// ResyncInterval is how often the whole state is re-read unprompted.
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

	// IrqbalanceEnvFile is irqbalance's environment file, whose banned
	// CPUs are banned too (cri-o and tuned write them): a path, "auto"
	// for the first of bans.EnvFiles that exists, "" for none.
	IrqbalanceEnvFile string
	// HonorDefaultAffinity bans the CPUs /proc/irq/default_smp_affinity
	// leaves out (cri-o clears a pod's CPUs from it); nil means: when an
	// environment file is in use.
	HonorDefaultAffinity *bool

	// Balance applies to devices whose rule sets none.
	Balance Balance
	// XPS applies to devices whose rule sets none (xps).
	XPS XPSMode
	// NAPIThreads applies to devices whose rule sets none (napi_threads).
	NAPIThreads NAPIThreadsMode
	// LoadBalance tunes BalanceLoad.
	LoadBalance LoadBalance

	// Source is the file name the config came from, "" for Default.
	Source string
}

// Defaults that other packages need without a Config.
const (
	DefaultCoalesceWindow = 100 * time.Millisecond
	// DefaultLoadHalfLife is three samples of irqbalance's 10 s period:
	// a one-period burst moves the average by a fifth, so the planner
	// does not chase it, while a lasting shift shows at 90% within 100 s,
	// the scale on which moving an IRQ (and cooling its caches) pays.
	DefaultLoadHalfLife = 30 * time.Second
)

// Default returns the configuration an empty file gives.
func Default() *Config {
	return &Config{
		ExcludeIsolated:   true,
		ExcludeNohzFull:   true,
		Listen:            "127.0.0.1:9768",
		ResyncInterval:    60 * time.Second,
		CoalesceWindow:    DefaultCoalesceWindow,
		CoalesceMaxDelay:  500 * time.Millisecond,
		Balance:           BalanceCount,
		XPS:               XPSFollow,
		NAPIThreads:       NAPIThreadsFollow,
		IrqbalanceEnvFile: "auto",
		LoadBalance: LoadBalance{
			Interval:       5 * time.Second,
			HalfLife:       DefaultLoadHalfLife,
			MinGain:        0.1,
			MinDrop:        0.03,
			MinPeak:        0.1,
			Samples:        3,
			MovesPerMinute: 6,
			QueueCounters:  QueueCountersAuto,
		},
	}
}

// Balance names how a device's queues share out the CPUs of its policy.
type Balance string

const (
	// BalanceCount weighs every queue the same, as drivers place them at
	// probe: queue i goes to the i-th least-used CPU of the spread order.
	BalanceCount Balance = "count"
	// BalanceLoad moves busy queues from count's placement, within the
	// hops count used, to make the busiest CPU's measured load least.
	BalanceLoad Balance = "load"
)

var balances = []Balance{BalanceCount, BalanceLoad}

// LoadBalance tunes BalanceLoad: how loads are sampled and smoothed, and
// how reluctant the daemon is to move a queue.
type LoadBalance struct {
	// Interval is how often /proc/stat and /proc/interrupts are sampled.
	Interval time.Duration
	// HalfLife is that of the exponentially weighted average loads.
	HalfLife time.Duration
	// MinGain is the fraction by which a move must lower the busiest
	// CPU's load; Samples is how many consecutive samples must show
	// that gain before the move is made.
	MinGain float64
	Samples int
	// MinDrop is the least, in CPUs, by which a move must lower the busiest
	// CPU's load: less is not worth the cold caches and reordered packets.
	MinDrop float64
	// MinPeak is the busiest CPU's interrupt load (in CPUs) below which
	// nothing moves: on a quiet machine no CPU is short of time.
	MinPeak float64
	// MovesPerMinute bounds the queue moves in any minute.
	MovesPerMinute int
	// QueueCounters says whether NIC queues are weighed by their packet
	// counters where they have them.
	QueueCounters QueueCounters
}

// WantsLoad reports whether the config's balance or one of its rules
// says load.
func (c *Config) WantsLoad() bool {
	return c.Balance == BalanceLoad || slices.ContainsFunc(c.Devices, func(r Rule) bool { return r.Balance == BalanceLoad })
}

// Summary is a one-line description of c for logs, in the file's key
// names.
func (c *Config) Summary() string {
	src, honor := cmp.Or(c.Source, "defaults"), "auto"
	if c.HonorDefaultAffinity != nil {
		honor = fmt.Sprint(*c.HonorDefaultAffinity)
	}
	return fmt.Sprintf("config %s: %d device rules, banned_cpus=%q exclude_isolated=%t exclude_nohz_full=%t "+
		"listen=%q resync_interval=%s restore_on_exit=%t coalesce_window=%s coalesce_max_delay=%s metrics_per_irq=%t "+
		"balance=%s xps=%s napi_threads=%s load_balance={interval=%s half_life=%s min_gain=%g min_drop=%g min_peak=%g samples=%d moves_per_minute=%d queue_counters=%s} "+
		"irqbalance_env_file=%q honor_default_smp_affinity=%s",
		src, len(c.Devices), c.BannedCPUs.String(), c.ExcludeIsolated, c.ExcludeNohzFull,
		c.Listen, c.ResyncInterval, c.RestoreOnExit, c.CoalesceWindow, c.CoalesceMaxDelay, c.MetricsPerIRQ,
		c.Balance, c.XPS, c.NAPIThreads, c.LoadBalance.Interval, c.LoadBalance.HalfLife, c.LoadBalance.MinGain, c.LoadBalance.MinDrop, c.LoadBalance.MinPeak, c.LoadBalance.Samples,
		c.LoadBalance.MovesPerMinute, c.LoadBalance.QueueCounters, c.IrqbalanceEnvFile, honor)
}
