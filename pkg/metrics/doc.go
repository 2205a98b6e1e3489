// Package metrics is the daemon's Prometheus registry and its small HTTP
// server (/metrics, /healthz, /plan, /status): the last step of the
// pipeline.
//
// The daemon reports each round and reload once (RoundDone, RoundFailed,
// ConfigReload) to the counters and histograms. Everything else is read
// at scrape time, as node_exporter's collectors do: the IRQ gauges,
// /plan and /status from the state.Store's newest State, the event
// counters from the watcher's Stats. Names start with numairqd_ and use
// base units.
//
// The server is bounded so that no client can grow the daemon: /plan is
// encoded once per published State (plancache.go), /metrics, /plan and
// /status run a fixed number of requests at once and queue the rest
// briefly (limit.go), and the connections are capped (connlimit.go).
package metrics
