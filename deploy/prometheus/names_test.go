package prometheus

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/daemon"
)

// targetLabels are added by Prometheus or the PodMonitor
// (deploy/kubernetes/podmonitor.yaml), not by numairqd: any selector may
// use them.
var targetLabels = map[string]bool{"instance": true, "job": true, "namespace": true, "pod": true, "node": true}

// prometheusSeries are series Prometheus makes itself; only the rules
// may use them (NumairqdDown needs up: a dead daemon exports nothing).
var prometheusSeries = map[string]bool{"up": true}

// An exposition is what one scrape returned: for each sample name, its
// label names and the values each took.
type exposition map[string]map[string]map[string]bool

// parseExposition reads Prometheus's text format.
func parseExposition(text string) (exposition, error) {
	out := exposition{}
	for n, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest := line, ""
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		labels := map[string]map[string]bool{}
		if strings.HasPrefix(rest, "{") {
			s := &scanner{src: rest}
			ms, err := s.matchers()
			if err != nil {
				return nil, fmt.Errorf("line %d: %q: %w", n+1, line, err)
			}
			for _, m := range ms {
				labels[m.label] = map[string]bool{m.value: true}
			}
		}
		if out[name] == nil {
			out[name] = map[string]map[string]bool{}
		}
		for l, vs := range labels {
			if out[name][l] == nil {
				out[name][l] = map[string]bool{}
			}
			for v := range vs {
				out[name][l][v] = true
			}
		}
	}
	return out, nil
}

// scrapeDryRun runs numairqd in dry-run mode on the e2e guest's fixture
// tree (4 nodes, a virtio-net with 6 queue pairs, an NVMe), with every
// metric that depends on the config turned on (metrics_per_irq,
// balance: load with a load on every CPU), and returns the first scrape
// that has all of want, or the last one after 30 s.
func scrapeDryRun(t *testing.T, want func(exposition) []string) exposition {
	t.Helper()
	tree := fakesys.New(t)
	tree.AddMachine(fakesys.QEMUGuest())
	tree.AddQEMUGuestDevices()
	stop := make(chan struct{})
	done := make(chan struct{})
	writeProcStat(t, tree, 0)
	go func() {
		defer close(done)
		for tick := 1; ; tick++ {
			select {
			case <-stop:
				return
			case <-time.After(250 * time.Millisecond):
				writeProcStat(t, tree, tick)
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })

	cfg := filepath.Join(t.TempDir(), "numairqd.yaml")
	if err := os.WriteFile(cfg, []byte("metrics_per_irq: true\nbalance: load\nload_balance:\n  interval: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	d, err := daemon.New(daemon.Options{Sysfs: tree.Sys(), Procfs: tree.Proc(), Etc: "", ConfigPath: cfg,
		Listen: addr, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(ctx, nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("daemon: %v", err)
		}
	})

	var last exposition
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		text, err := get("http://" + addr + "/metrics")
		if err != nil {
			continue
		}
		if last, err = parseExposition(text); err != nil {
			t.Fatalf("/metrics: %v", err)
		}
		if len(want(last)) == 0 {
			return last
		}
	}
	if last == nil {
		t.Fatalf("no scrape of %s succeeded in 30 s", addr)
	}
	return last
}

// writeProcStat writes the fixture's /proc/stat as it stands after tick
// intervals of 100 ticks per CPU, CPU c spending c+1 of them in
// softirq: loads for balance: load. It replaces the file by a rename,
// so a read never sees half of it.
func writeProcStat(t *testing.T, tree *fakesys.Tree, tick int) {
	var b strings.Builder
	b.WriteString("cpu  0 0 0 0 0 0 0 0 0 0\n")
	for c := range 8 {
		soft := tick * (c + 1)
		fmt.Fprintf(&b, "cpu%d 0 0 0 %d 0 0 %d 0 0 0\n", c, tick*100-soft, soft)
	}
	tmp := tree.Path("proc/.stat.tmp")
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		t.Error(err)
		return
	}
	if err := os.Rename(tmp, tree.Path("proc/stat")); err != nil {
		t.Error(err)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

var client = &http.Client{Timeout: 5 * time.Second}

func get(url string) (string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(b), nil
}

// A query is one PromQL expression of this directory, with where it is.
type query struct {
	where string
	expr  string
	// rules may use prometheusSeries; series are rules_test.yml's input
	// series, whose label values are made up.
	rules, series bool
	// label is the label a Grafana label_values(expr, label) asks for.
	label string
}

func rulesQueries(t *testing.T) []query {
	t.Helper()
	var f struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Alert, Record, Expr string
			}
		}
	}
	readYAML(t, "numairqd.rules.yml", &f)
	var out []query
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			out = append(out, query{where: "numairqd.rules.yml: " + r.Alert + r.Record, expr: r.Expr, rules: true})
		}
	}
	var tf struct {
		Tests []struct {
			Name        string
			InputSeries []struct{ Series string } `yaml:"input_series"`
		}
	}
	readYAML(t, "rules_test.yml", &tf)
	for _, tc := range tf.Tests {
		for _, s := range tc.InputSeries {
			out = append(out, query{where: "rules_test.yml: " + tc.Name, expr: s.Series, rules: true, series: true})
		}
	}
	return out
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

var labelValues = regexp.MustCompile(`^\s*label_values\((?:(.*),)?\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$`)

// dashboardQueries are every panel target's expr and every templating
// query of dashboard.json, rows' panels included.
func dashboardQueries(t *testing.T) []query {
	t.Helper()
	b, err := os.ReadFile("dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels     []panel
		Templating struct {
			List []struct {
				Name, Type string
				Query      any
			}
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	var out []query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				out = append(out, query{where: fmt.Sprintf("dashboard.json: panel %q target %s", p.Title, tg.RefID), expr: tg.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(string)
		if m, ok := v.Query.(map[string]any); ok {
			q, _ = m["query"].(string)
		}
		where := fmt.Sprintf("dashboard.json: variable %q", v.Name)
		if m := labelValues.FindStringSubmatch(q); m != nil {
			out = append(out, query{where: where, expr: m[1], label: m[2]})
		} else {
			out = append(out, query{where: where, expr: q})
		}
	}
	return out
}

type panel struct {
	Title   string
	Targets []struct {
		Expr  string
		RefID string `json:"refId"`
	}
	Panels []panel
}

var numairqdName = regexp.MustCompile(`numairqd_[a-zA-Z0-9_:]+`)

// problems returns what is wrong with q against the scrape e: a
// metric numairqd does not export, a label its series do not have, a
// label value they never take, or a grouping label none of the query's
// metrics has. An empty list means every name checks out.
func problems(q query, e exposition) []string {
	var out []string
	r, err := parsePromQL(q.expr)
	if err != nil {
		return []string{err.Error()}
	}
	if strings.TrimSpace(q.expr) == "" {
		return []string{"empty query"}
	}
	if len(r.selectors) == 0 {
		out = append(out, fmt.Sprintf("%q names no metric", q.expr))
	}
	seen := map[string]bool{}
	labels := map[string]bool{}
	for _, s := range r.selectors {
		seen[s.name] = true
		if q.rules && prometheusSeries[s.name] {
			continue
		}
		series, ok := e[s.name]
		if !ok {
			out = append(out, fmt.Sprintf("metric %q is not exported by numairqd", s.name))
			continue
		}
		for l := range series {
			labels[l] = true
		}
		for _, m := range s.matchers {
			if targetLabels[m.label] || m.label == "__name__" {
				continue
			}
			values, ok := series[m.label]
			if !ok {
				out = append(out, fmt.Sprintf("%s has no label %q", s.name, m.label))
				continue
			}
			if q.series || strings.Contains(m.value, "$") {
				continue
			}
			for _, v := range literalValues(m) {
				if !values[v] {
					out = append(out, fmt.Sprintf("%s{%s} never takes the value %q (it has %v)", s.name, m.label, v, sortedKeys(values)))
				}
			}
		}
	}
	for _, l := range append(r.labels, q.label) {
		if l != "" && !labels[l] && !targetLabels[l] {
			out = append(out, fmt.Sprintf("no metric of the query has the label %q", l))
		}
	}
	// The lexer must have seen every numairqd_ name as a selector:
	// one it mistook for something else would go unchecked.
	for _, n := range numairqdName.FindAllString(q.expr, -1) {
		if !seen[n] {
			out = append(out, fmt.Sprintf("%q is in the query but was not read as a metric", n))
		}
	}
	return out
}

// literalValues are the values a matcher names: its value for =, each
// alternative of a regexp of plain alternatives ("error|no_space") for
// =~; none for negative matchers and other regexps.
func literalValues(m matcher) []string {
	switch m.op {
	case "=":
		return []string{m.value}
	case "=~":
		if regexp.MustCompile(`^[a-zA-Z0-9_.:-]+(\|[a-zA-Z0-9_.:-]+)*$`).MatchString(m.value) {
			return strings.Split(m.value, "|")
		}
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestRulesAndDashboardNameExportedMetrics scrapes a dry-run numairqd and
// checks every query of numairqd.rules.yml, rules_test.yml's input
// series and dashboard.json against it.
func TestRulesAndDashboardNameExportedMetrics(t *testing.T) {
	queries := append(rulesQueries(t), dashboardQueries(t)...)
	if len(queries) < 20 {
		t.Fatalf("only %d queries found: is the parsing of the files broken?", len(queries))
	}
	missing := func(e exposition) []string {
		var out []string
		for _, q := range queries {
			out = append(out, problems(q, e)...)
		}
		return out
	}
	e := scrapeDryRun(t, missing)
	names := map[string]bool{}
	for _, q := range queries {
		for _, p := range problems(q, e) {
			t.Errorf("%s: %s", q.where, p)
		}
		r, _ := parsePromQL(q.expr)
		for _, s := range r.selectors {
			names[s.name] = true
		}
	}
	// Not a failure: a metric exported but on neither the dashboard nor
	// in a rule is worth knowing about.
	var unused []string
	for n := range e {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
		if strings.HasPrefix(n, "numairqd_") && !names[n] && !names[base+"_bucket"] && !names[base] {
			unused = append(unused, n)
		}
	}
	slices.Sort(unused)
	t.Logf("%d queries checked against %d exported series names; numairqd metrics used nowhere here: %v", len(queries), len(e), unused)
}

// TestParsePromQL: the lexer tells metric names from functions,
// keywords, label names, durations, strings and Grafana variables.
func TestParsePromQL(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		names  []string
		labels []string
	}{
		{`up{job="numairqd"} == 0`, []string{"up"}, nil},
		{`time() - numairqd_last_round_timestamp_seconds > 3 * 60`, []string{"numairqd_last_round_timestamp_seconds"}, nil},
		{`sum without (result) (rate(numairqd_affinity_writes_total{result=~"error|no_space|busy"}[5m])) > 0`,
			[]string{"numairqd_affinity_writes_total"}, []string{"result"}},
		{`histogram_quantile(0.99, sum by (le) (rate(numairqd_round_duration_seconds_bucket{instance=~"$instance"}[$__rate_interval])))`,
			[]string{"numairqd_round_duration_seconds_bucket"}, []string{"le"}},
		{"a - on (instance, device) group_left\n  min by (instance, device) (min_over_time(b[1d])) > 0.5 unless on (instance) (c offset 1h > bool d)",
			[]string{"a", "b", "c", "d"}, []string{"instance", "device", "instance", "device", "instance"}},
		{`{__name__="x", a='it\'s'} # a comment naming y`, []string{"x"}, nil},
		{`label_join(x, "dst", ",", "src") or vector(1) and ${var} > 1e3`, []string{"x"}, nil},
	} {
		r, err := parsePromQL(tc.expr)
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		var names []string
		for _, s := range r.selectors {
			names = append(names, s.name)
		}
		if !slices.Equal(names, tc.names) || !slices.Equal(r.labels, tc.labels) {
			t.Errorf("%q: names %q labels %q, want %q %q", tc.expr, names, r.labels, tc.names, tc.labels)
		}
	}
	for _, bad := range []string{`x{a="b"`, `x{a}`, `x{a="b}`, `rate(x[5m)`} {
		if _, err := parsePromQL(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestProblems: a wrong name, label, value or grouping label is caught.
func TestProblems(t *testing.T) {
	e, err := parseExposition("# TYPE numairqd_irqs gauge\n" +
		`numairqd_irqs{device="none",policy="auto",state="placed"} 1` + "\n" +
		`numairqd_irqs{device="none",policy="auto",state="failed"} 0` + "\n" +
		"numairqd_allowed_cpus 8\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    query
		want string
	}{
		{query{expr: `sum by (state) (numairqd_irqs{state="failed", instance="x"})`}, ""},
		{query{expr: `numairqd_irq{state="failed"}`}, `metric "numairqd_irq" is not exported`},
		{query{expr: `numairqd_irqs{status="failed"}`}, `no label "status"`},
		{query{expr: `numairqd_irqs{state=~"failed|lost"}`}, `never takes the value "lost"`},
		{query{expr: `sum by (cpu) (numairqd_allowed_cpus)`}, `the label "cpu"`},
		{query{expr: `up == 0`}, `metric "up" is not exported`},
		{query{expr: `up == 0`, rules: true}, ""},
		{query{expr: `numairqd_irqs{state="made_up"}`, series: true}, ""},
		{query{expr: `numairqd_allowed_cpus`, label: "device"}, `the label "device"`},
	} {
		got := strings.Join(problems(tc.q, e), "; ")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.q.expr, got, tc.want)
		}
	}
}
