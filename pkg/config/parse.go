package config

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Parse decodes one YAML document named name; an empty one gives
// Default. Any problem gives a nil Config and every *Error found, joined
// and sorted by line; past maxErrors a last "... and N more errors"
// counts the rest. Time and memory are linear in len(data).
func Parse(name string, data []byte) (*Config, error) {
	name = cmp.Or(name, "config")
	p := &parser{file: name, memo: make(map[memoKey]any)}
	c := Default()
	c.Source = name
	if len(data) > maxSize {
		p.errorf(nil, "", nil, "%d bytes is larger than the limit of %d bytes (want a file of at most 1 MiB)", len(data), maxSize)
	} else if root := p.decode(data); root != nil {
		p.config(root, c)
	}
	if len(p.errs) == 0 {
		return c, nil
	}
	if p.dropped > 0 {
		p.errs = append(p.errs, &Error{File: name, Msg: fmt.Sprintf("... and %d more errors", p.dropped)})
	}
	errs := make([]error, len(p.errs))
	for i, e := range p.errs {
		errs[i] = e
	}
	return nil, errors.Join(errs...)
}

// Keys in the example file's order, for "want one of".
var (
	topKeys  = []string{"mode", "watch_config", "banned_cpus", "exclude_isolated", "exclude_nohz_full", "isolated_partitions", "devices", "listen", "resync_interval", "restore_on_exit", "coalesce_window", "coalesce_max_delay", "metrics_per_irq", "balance", "xps", "napi_threads", "load_balance", "irqbalance_env_file", "honor_default_smp_affinity"}
	loadKeys = []string{"interval", "half_life", "min_gain", "min_drop", "min_peak", "samples", "moves_per_minute", "queue_counters"}
)

// config reads the top-level settings over the defaults in c.
func (p *parser) config(root *yaml.Node, c *Config) {
	root = resolve(root)
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return // "---" alone: defaults
	}
	if root.Kind != yaml.MappingNode {
		p.wrongType(root, "", "a mapping of settings")
		return
	}
	var windowOK, maxDelayOK bool
	var windowNode, maxDelayNode *yaml.Node
	p.mapping(root, "", topKeys, func(key string, k, v *yaml.Node, path string) {
		switch key {
		case "mode":
			c.Mode, _ = oneOf(p, v, path, "mode", modes)
		case "watch_config":
			c.WatchConfig, _ = p.boolean(v, path)
		case "banned_cpus":
			c.BannedCPUs, _ = p.cpuList(v, path)
		case "exclude_isolated":
			c.ExcludeIsolated, _ = p.boolean(v, path)
		case "exclude_nohz_full":
			c.ExcludeNohzFull, _ = p.boolean(v, path)
		case "isolated_partitions":
			c.IsolatedPartitions, _ = p.boolean(v, path)
		case "devices":
			c.Devices = p.devices(v, path)
		case "listen":
			c.Listen, _ = p.str(v, path, wantListen)
			if err := CheckListen(c.Listen); err != nil {
				p.errorf(v, path, errors.Unwrap(err), "%s", err)
			}
		case "resync_interval":
			c.ResyncInterval, _ = p.duration(v, path, minResyncInterval, 0)
		case "restore_on_exit":
			c.RestoreOnExit, _ = p.boolean(v, path)
		case "coalesce_window":
			windowNode = v
			c.CoalesceWindow, windowOK = p.duration(v, path, 0, maxCoalesceWindow)
		case "coalesce_max_delay":
			maxDelayNode = v
			c.CoalesceMaxDelay, maxDelayOK = p.duration(v, path, 0, 0)
		case "metrics_per_irq":
			c.MetricsPerIRQ, _ = p.boolean(v, path)
		case "balance":
			c.Balance, _ = oneOf(p, v, path, "balance", balances)
		case "xps":
			c.XPS, _ = oneOf(p, v, path, "xps mode", xpsModes)
		case "napi_threads":
			c.NAPIThreads, _ = oneOf(p, v, path, "napi_threads mode", napiThreadsModes)
		case "load_balance":
			p.loadBalance(v, path, &c.LoadBalance)
		case "irqbalance_env_file":
			if f, ok := p.str(v, path, wantEnvFile); ok && f != "" && f != "auto" && !filepath.IsAbs(f) {
				p.errorf(v, path, nil, "%q is not an absolute path (want %s)", f, wantEnvFile)
			} else {
				c.IrqbalanceEnvFile = f
			}
		case "honor_default_smp_affinity":
			if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" && v.Value == "auto" {
				c.HonorDefaultAffinity = nil
			} else if !p.stringFor(v, path, "true, false or auto", "true", "false", "auto") && p.scalar(v, path, "true, false or auto", "!!bool") {
				b, _ := p.boolean(v, path)
				c.HonorDefaultAffinity = &b
			}
		}
	})
	if (windowNode == nil || windowOK) && (maxDelayNode == nil || maxDelayOK) && c.CoalesceMaxDelay < c.CoalesceWindow {
		at := cmp.Or(maxDelayNode, windowNode)
		p.errorf(at, "coalesce_max_delay", nil, "%s is shorter than coalesce_window %s (want coalesce_max_delay >= coalesce_window)",
			c.CoalesceMaxDelay, c.CoalesceWindow)
	}
}

// Bounds on the settings.
const (
	minResyncInterval = time.Second
	maxCoalesceWindow = 10 * time.Second
	minLoadInterval   = time.Second
	maxLoadInterval   = 10 * time.Minute
	maxLoadHalfLife   = time.Hour
	maxLoadSamples    = 1000
	// MinLoadMinDrop is min_drop's floor: half a percent of a CPU.
	MinLoadMinDrop    = 0.005
	maxMovesPerMinute = 10000
)

// loadBalance parses the load_balance mapping over the defaults in lb.
func (p *parser) loadBalance(n *yaml.Node, path string, lb *LoadBalance) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return // "load_balance:" with every key commented out
	}
	if n.Kind != yaml.MappingNode {
		p.wrongType(n, path, "a mapping of "+strings.Join(loadKeys, ", "))
		return
	}
	p.mapping(n, path, loadKeys, func(key string, k, v *yaml.Node, path string) {
		switch key {
		case "interval":
			lb.Interval, _ = p.duration(v, path, minLoadInterval, maxLoadInterval)
		case "half_life":
			lb.HalfLife, _ = p.duration(v, path, minLoadInterval, maxLoadHalfLife)
		case "min_gain":
			lb.MinGain, _ = p.fraction(v, path)
		case "min_drop":
			if f, ok := p.fraction(v, path); ok && f < MinLoadMinDrop {
				p.errorf(v, path, nil, "%s is below %g (half a percent of a CPU, the least the planner moves for)", v.Value, MinLoadMinDrop)
			} else {
				lb.MinDrop = f
			}
		case "min_peak":
			lb.MinPeak, _ = p.fraction(v, path)
		case "samples":
			lb.Samples, _ = p.integer(v, path, 1, maxLoadSamples, "")
		case "moves_per_minute":
			lb.MovesPerMinute, _ = p.integer(v, path, 1, maxMovesPerMinute, "")
		case "queue_counters":
			lb.QueueCounters, _ = oneOf(p, v, path, "queue counters mode", queueCountersModes)
		}
	})
}
