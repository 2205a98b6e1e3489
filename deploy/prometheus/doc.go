// Package prometheus holds numairqd's alerting rules (numairqd.rules.yml,
// unit-tested by rules_test.yml with promtool) and its Grafana dashboard
// (dashboard.json). It has no code: its test runs a dry-run daemon on a
// fixture tree, scrapes /metrics and checks that every metric, label
// and label value the rules and the dashboard name is one numairqd
// exports.
package prometheus
