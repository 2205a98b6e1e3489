// Package prometheus holds numairqd's alerting rules (numairqd.rules.yml,
// unit-tested by rules_test.yml with promtool), its Grafana dashboard
// (dashboard.json) and the scrape job for bare-metal hosts
// (scrape.yml). It has no code: its test runs a dry-run daemon on a
// fixture tree, scrapes /metrics and checks that every metric, label
// and label value the rules and the dashboard name is one numairqd
// exports.
//
// live_test.go goes further with a real Prometheus (the binary
// NUMAIRQD_PROMETHEUS names; scripts/prometheus.sh takes Debian's): it
// loads numairqd.rules.yml unmodified, scrapes with scrape.yml's job
// (only its target replaced) a `numairqd run --dry-run` process whose
// fixture has IRQs on CPUs the config bans, and must show
// NumairqdIRQsOnBannedCPUs pending and then firing in /api/v1/alerts,
// with the target up and no other alert active. The rule's for: 5m is
// real, so it takes about 5 minutes; unset, the variable skips it.
package prometheus
