// Package metrics is the daemon's Prometheus registry and its small HTTP
// server (/metrics, /healthz, /plan).
//
// It is the last step of the pipeline: the daemon counts what it does
// through the methods of Metrics (direct instruments), and publishes a
// Status after every round; a scrape-time collector reads the newest
// Status and turns the plan into gauges, as node_exporter's collectors
// do. Every name starts with numairqd_, uses base units, and counters
// end in _total.
package metrics
