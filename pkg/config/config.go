package config

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// Config is one parsed configuration file, immutable once Parse or
// Default returns it. Most fields are named after the file's keys.
type Config struct {
	// BannedCPUs never receive an IRQ; ExcludeIsolated and ExcludeNohzFull
	// also ban the isolcpus and nohz_full CPUs, IsolatedPartitions those
	// of isolated cgroup partitions.
	BannedCPUs         cpumask.Mask
	ExcludeIsolated    bool
	ExcludeNohzFull    bool
	IsolatedPartitions bool
	Devices            []Rule // in file order; the first match wins

	// Mode says whether the rounds write (ModeEnforce) or only plan,
	// log and serve what they would write (ModeObserve).
	Mode Mode
	// WatchConfig reloads the file when it changes; else only SIGHUP
	// (systemctl reload, numairqd reload) does.
	WatchConfig bool

	Listen         string        // metrics and HTTP address; "" disables it
	ResyncInterval time.Duration // how often all state is re-read
	RestoreOnExit  bool          // put back the affinities found at start
	// CoalesceWindow is the quiet time that ends a burst of events;
	// CoalesceMaxDelay bounds how long a stream of them postpones a round.
	CoalesceWindow   time.Duration
	CoalesceMaxDelay time.Duration
	MetricsPerIRQ    bool // one series per IRQ, not only per device

	// IrqbalanceEnvFile is irqbalance's environment file, whose banned
	// CPUs are banned too: a path, "auto" (bans.EnvFiles) or "" for none.
	IrqbalanceEnvFile string
	// HonorDefaultAffinity bans the CPUs default_smp_affinity leaves out;
	// nil means: when an environment file is in use.
	HonorDefaultAffinity *bool

	// Balance, XPS and NAPIThreads apply to devices whose rule sets none.
	Balance     Balance
	XPS         XPSMode
	NAPIThreads NAPIThreadsMode
	LoadBalance LoadBalance // tunes BalanceLoad

	Source string // the file name, "" for Default
}

// Defaults that other packages need without a Config.
const (
	DefaultCoalesceWindow = 100 * time.Millisecond
	// DefaultLoadHalfLife is three of irqbalance's 10 s periods: a burst
	// moves the average by a fifth, a lasting shift by 90% within 100 s.
	DefaultLoadHalfLife = 30 * time.Second
)

// Default returns the configuration an empty file gives.
func Default() *Config {
	return &Config{
		Mode:               ModeEnforce,
		WatchConfig:        true,
		ExcludeIsolated:    true,
		ExcludeNohzFull:    true,
		IsolatedPartitions: true,
		Listen:             "127.0.0.1:9768",
		ResyncInterval:     60 * time.Second,
		CoalesceWindow:     DefaultCoalesceWindow,
		CoalesceMaxDelay:   500 * time.Millisecond,
		Balance:            BalanceCount,
		XPS:                XPSFollow,
		NAPIThreads:        NAPIThreadsFollow,
		IrqbalanceEnvFile:  "auto",
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
	// BalanceCount gives queue i the i-th least-used CPU of the spread.
	BalanceCount Balance = "count"
	// BalanceLoad moves busy queues, within count's hops, to make the
	// busiest CPU's measured load least.
	BalanceLoad Balance = "load"
)

var balances = []Balance{BalanceCount, BalanceLoad}

// LoadBalance tunes BalanceLoad: load sampling, smoothing and moves.
type LoadBalance struct {
	Interval time.Duration // how often /proc/stat and /proc/interrupts are read
	HalfLife time.Duration // of the exponentially weighted loads
	// A move must lower the busiest CPU's load by the fraction MinGain in
	// Samples consecutive samples, and by MinDrop CPUs.
	MinGain float64
	Samples int
	MinDrop float64
	// MinPeak is the busiest CPU's load (in CPUs) below which none moves.
	MinPeak        float64
	MovesPerMinute int
	QueueCounters  QueueCounters // weigh NIC queues by their own counters
}

// WantsLoad reports whether the config's balance or a rule's says load.
func (c *Config) WantsLoad() bool {
	return c.Balance == BalanceLoad || slices.ContainsFunc(c.Devices, func(r Rule) bool { return r.Balance == BalanceLoad })
}

// Summary is a one-line description of c for logs, in the file's keys.
func (c *Config) Summary() string {
	src, honor := cmp.Or(c.Source, "defaults"), "auto"
	if c.HonorDefaultAffinity != nil {
		honor = fmt.Sprint(*c.HonorDefaultAffinity)
	}
	return fmt.Sprintf("config %s: %d device rules, mode=%s watch_config=%t banned_cpus=%q exclude_isolated=%t exclude_nohz_full=%t isolated_partitions=%t "+
		"listen=%q resync_interval=%s restore_on_exit=%t coalesce_window=%s coalesce_max_delay=%s metrics_per_irq=%t "+
		"balance=%s xps=%s napi_threads=%s load_balance={interval=%s half_life=%s min_gain=%g min_drop=%g min_peak=%g samples=%d moves_per_minute=%d queue_counters=%s} "+
		"irqbalance_env_file=%q honor_default_smp_affinity=%s",
		src, len(c.Devices), c.Mode, c.WatchConfig, c.BannedCPUs.String(), c.ExcludeIsolated, c.ExcludeNohzFull, c.IsolatedPartitions,
		c.Listen, c.ResyncInterval, c.RestoreOnExit, c.CoalesceWindow, c.CoalesceMaxDelay, c.MetricsPerIRQ,
		c.Balance, c.XPS, c.NAPIThreads, c.LoadBalance.Interval, c.LoadBalance.HalfLife, c.LoadBalance.MinGain, c.LoadBalance.MinDrop, c.LoadBalance.MinPeak, c.LoadBalance.Samples,
		c.LoadBalance.MovesPerMinute, c.LoadBalance.QueueCounters, c.IrqbalanceEnvFile, honor)
}
