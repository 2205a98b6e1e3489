// Package metrics is the daemon's Prometheus registry and its
// collectors; pkg/api serves them over HTTP.
//
// The daemon reports each round and reload once (RoundDone, RoundFailed,
// ConfigReload) to the counters and histograms. Everything else is read
// at scrape time, as node_exporter's collectors do: the IRQ gauges from
// the state.Store's newest State, the event counters from the watcher's
// Stats. Names start with numairqd_ and use base units.
package metrics
