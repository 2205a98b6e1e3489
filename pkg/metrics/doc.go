// Package metrics is the daemon's Prometheus registry and its small HTTP
// server (/metrics, /healthz, /plan): the last step of the pipeline.
//
// It reads; it never asks the daemon. The daemon reports each round and
// reload once (RoundDone, RoundFailed, ConfigReload), which feeds the
// counters and histograms. Everything else is computed at scrape time,
// as node_exporter's collectors do: the IRQ gauges and /plan from the
// newest State loaded from the state.Store, the event counters from the
// watcher's Stats. Every name starts with numairqd_, uses base units,
// and counters end in _total.
package metrics
