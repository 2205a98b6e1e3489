// Package metrics is the daemon's Prometheus registry and collectors.
// Rounds and reloads are counted as they happen; the IRQ gauges and
// event counters are read at scrape time from the newest State and the
// watcher's Stats.
package metrics
