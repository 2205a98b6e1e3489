package config

import (
	"cmp"
	"fmt"
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

// Defaults, as configs/numairqd.yaml documents them, that other
// packages need without a Config. Default holds every default.
const (
	DefaultResyncInterval   = 60 * time.Second
	DefaultCoalesceWindow   = 100 * time.Millisecond
	DefaultCoalesceMaxDelay = 500 * time.Millisecond
	// DefaultLoadHalfLife is how long a change in load takes to show by
	// half in the smoothed loads. Thirty seconds is three samples at a
	// 10 s period (irqbalance's): a burst that lasts one such period
	// moves the average by a fifth (1-2^(-1/3) = 0.21), so the planner
	// does not chase it, while a lasting shift (a new flow, a job
	// starting) shows at 90% within 100 s (3.3 half-lives), the time
	// scale on which moving an IRQ, and the cold caches that come with
	// it, is worth it.
	DefaultLoadHalfLife = 30 * time.Second
)

// Default returns the configuration an empty file gives: no banned CPUs,
// isolated and nohz_full CPUs excluded, no device rules (every device
// gets PolicyAuto), metrics on 127.0.0.1:9768.
func Default() *Config {
	return &Config{
		ExcludeIsolated:   true,
		ExcludeNohzFull:   true,
		Listen:            "127.0.0.1:9768",
		ResyncInterval:    DefaultResyncInterval,
		CoalesceWindow:    DefaultCoalesceWindow,
		CoalesceMaxDelay:  DefaultCoalesceMaxDelay,
		Balance:           BalanceCount,
		IrqbalanceEnvFile: "auto",
		LoadBalance: LoadBalance{
			Interval:       5 * time.Second,
			HalfLife:       DefaultLoadHalfLife,
			MinGain:        0.1,
			MinDrop:        0.03,
			MinPeak:        0.1,
			Samples:        3,
			MovesPerMinute: 6,
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

// Summary is a one-line description of c for logs, in the file's key
// names.
func (c *Config) Summary() string {
	src, honor := cmp.Or(c.Source, "defaults"), "auto"
	if c.HonorDefaultAffinity != nil {
		honor = fmt.Sprint(*c.HonorDefaultAffinity)
	}
	return fmt.Sprintf("config %s: %d device rules, banned_cpus=%q exclude_isolated=%t exclude_nohz_full=%t "+
		"listen=%q resync_interval=%s restore_on_exit=%t coalesce_window=%s coalesce_max_delay=%s metrics_per_irq=%t "+
		"balance=%s load_balance={interval=%s half_life=%s min_gain=%g min_drop=%g min_peak=%g samples=%d moves_per_minute=%d} "+
		"irqbalance_env_file=%q honor_default_smp_affinity=%s",
		src, len(c.Devices), c.BannedCPUs.String(), c.ExcludeIsolated, c.ExcludeNohzFull,
		c.Listen, c.ResyncInterval, c.RestoreOnExit, c.CoalesceWindow, c.CoalesceMaxDelay, c.MetricsPerIRQ,
		c.Balance, c.LoadBalance.Interval, c.LoadBalance.HalfLife, c.LoadBalance.MinGain, c.LoadBalance.MinDrop, c.LoadBalance.MinPeak, c.LoadBalance.Samples,
		c.LoadBalance.MovesPerMinute, c.IrqbalanceEnvFile, honor)
}
