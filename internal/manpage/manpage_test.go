package manpage

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/config"
)

var update = flag.Bool("update", false, "rewrite "+page+" from the manual and the flags")

// page is the checked-in numairqd(8), which scripts/deb.sh packages.
const page = "../../deploy/debian/numairqd.8"

// unitFile is the systemd unit the page describes.
const unitFile = "../../deploy/systemd/numairqd.service"

// TestPageIsCurrent renders the page from the manual (Sources) and the
// -h output of a freshly built numairqd and compares it with the
// checked-in one: the CI check that neither the flags nor the manual's
// tables changed without it. go test ./internal/manpage -update
// rewrites it.
func TestPageIsCurrent(t *testing.T) {
	var pages []Page
	for _, src := range Sources {
		text, err := os.ReadFile(filepath.Join("../..", src))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, Page{Path: src, Text: text})
	}
	unit, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Render(pages, helpOf(t, buildNumairqd(t)), unit)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(page, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("%v (go test ./internal/manpage -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: the manual or the flags changed; run go test ./internal/manpage -update\n%s", page, firstDiff(got, want))
	}
}

// TestPageFormats runs the checked-in page through man(1) when it is
// installed, as lintian does: groff must have nothing to warn about.
func TestPageFormats(t *testing.T) {
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("no man(1)")
	}
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", abs)
	cmd.Env = append(os.Environ(), "MANWIDTH=80", "LC_ALL=C.UTF-8")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Errorf("man --warnings %s: %v\n%s", page, err, stderr.String())
	}
}

func buildNumairqd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "numairqd")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/numairqd")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// helpOf runs "numairqd CMD -h" for each of Commands: it prints a usage
// line and the flags on stdout and exits 0.
func helpOf(t *testing.T, bin string) map[string][]Flag {
	t.Helper()
	flags := map[string][]Flag{}
	for _, c := range Commands {
		var stdout bytes.Buffer
		cmd := exec.Command(bin, c, "-h")
		cmd.Stdout = &stdout
		err := cmd.Run()
		if err != nil {
			t.Fatalf("numairqd %s -h: %v, want exit status 0", c, err)
		}
		if flags[c], err = ParseFlags(stdout.String()); err != nil {
			t.Fatalf("numairqd %s -h: %v", c, err)
		}
	}
	return flags
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "first difference at line " + strconv.Itoa(i+1) + ":\n--- rendered\n" + gl + "\n--- checked in\n" + wl
		}
	}
	return ""
}

func TestParseFlags(t *testing.T) {
	help := "Usage of plan:\n" +
		"  -config string\n" +
		"    \tconfig file (default /etc/x.yaml if it exists, else built-in defaults)\n" +
		"  -dry-run\n" +
		"    \tplan and log the writes, write nothing\n" +
		"  -format string\n" +
		"    \toutput format: text or json (default \"text\")\n" +
		"  -load-sample duration\n" +
		"    \tmeasure loads\n" +
		"    \tover this long (default 2s)\n"
	got, err := ParseFlags(help)
	if err != nil {
		t.Fatal(err)
	}
	want := []Flag{
		// The help's own "(default ...)" reads as one: rendered the same.
		{Name: "config", Arg: "string", Usage: "config file", Default: "/etc/x.yaml if it exists, else built-in defaults"},
		{Name: "dry-run", Usage: "plan and log the writes, write nothing"},
		{Name: "format", Arg: "string", Usage: "output format: text or json", Default: `"text"`},
		{Name: "load-sample", Arg: "duration", Usage: "measure loads over this long", Default: "2s"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d flags, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("flag %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"", "Usage of x:\n", "    \tusage first\n", "  -a b c\n"} {
		if _, err := ParseFlags(bad); err == nil {
			t.Errorf("ParseFlags(%q): no error", bad)
		}
	}
}

const miniREADME = "# numairqd\n\nFirst *paragraph*.\n\nSecond, with `--x`.\n\n```\ndiagram\n```\n\n" +
	"| command | does |\n|---|---|\n| `numairqd plan` | a landing page's table, not the manual's |\n\n" +
	"| command | what it does |\n|---|---|\n" +
	"| `numairqd [run] [flags]` | the daemon |\n" +
	"| `numairqd plan [--sysfs D] [--format text\\|json]` | print |\n" +
	"| `numairqd topology [--sysfs D]` | print |\n" +
	"| `numairqd status [--watch]` | show |\n" +
	"| `numairqd reload [--pid N]` | signal |\n\n" +
	"| exit status | meaning |\n|---|---|\n| 0 | fine |\n\n" +
	"| file | what it is |\n|---|---|\n| `/run/x.lock` | the lock (`--lock-file`) |\n\n" +
	"Allowed CPUs = online.\n\nWorked example: one node.\n\n" +
	"| policy | rule | example |\n|---|---|---|\n| `numa-hop` | by hops | CPUs 0 1 |\n| `ignore` | leave it | |\n\n" +
	"`balance` says how.\n\n`configs/numairqd.yaml` is an example.\n\nand a file with any error is not applied.\n\n" +
	"| flag | default | meaning |\n|---|---|---|\n" +
	"| `--sysfs DIR`, `--procfs DIR` | `/sys`, `/proc` | roots (see [A section](#a-section), [B](other.md#b), [C](../C.md)) |\n" +
	"| `--lock-file FILE` | `/run/x.lock` | the lock |\n\n" +
	"Signals: SIGHUP reloads.\n\n" +
	"| key | default | meaning |\n|---|---|---|\n| `banned_cpus` | `\"\"` | CPUs − none |\n\n" +
	"| rule key | meaning |\n|---|---|\n| `match.pci` | a regexp |\n\n" +
	"All the `match` keys must match.\n\n" +
	"On `listen` (default `127.0.0.1:9768`):\n\n" +
	"| endpoint | what it answers |\n|---|---|\n| `/metrics` | metrics |\n\n" +
	"A request that finds them busy waits.\n\n" +
	"| `/status` field | what it holds |\n|---|---|\n| `version` | the version |\n\n" +
	"| `/plan` field | what it holds |\n|---|---|\n| `allowed` | CPUs |\n\n" +
	"| device field | what it holds |\n|---|---|\n| `pci` | address |\n\n" +
	"| IRQ field | what it holds |\n|---|---|\n| `irq` | number |\n\n" +
	"| metric | type | labels | meaning |\n|---|---|---|---|\n| `numairqd_x_total` | counter | `a` | xs |\n\n" +
	"systemd: `READY=1` after the first round.\n\n" +
	"| errno | meaning | what numairqd does |\n|---|---|---|\n| ENOENT | freed | count |\n"

const miniUnit = "[Service]\nType=notify\nExecReload=/usr/local/bin/numairqd reload --pid $MAINPID\n" +
	"[Unit]\nConflicts=irqbalance.service\n[Service]\nWatchdogSec=30s\n"

func miniFlags() map[string][]Flag {
	return map[string][]Flag{
		"run":      {{Name: "sysfs", Arg: "string"}, {Name: "procfs", Arg: "string"}, {Name: "lock-file", Arg: "string", Default: `"/run/x.lock"`}},
		"reload":   {{Name: "pid", Arg: "int"}},
		"plan":     {{Name: "sysfs", Arg: "string"}, {Name: "format", Arg: "string", Usage: "text or json", Default: `"text"`}},
		"topology": {{Name: "sysfs", Arg: "string", Usage: `sysfs root\to read`}},
		"status":   {{Name: "watch"}},
	}
}

// miniPages splits a mini manual into README.md, up to the commands
// table, and docs/manual.md, the rest.
func miniPages(text string) []Page {
	readme, rest, _ := strings.Cut(text, "| command | what it does |")
	return []Page{{Path: "README.md", Text: []byte(readme)}, {Path: "docs/manual.md", Text: []byte("# Manual\n\n| command | what it does |" + rest)}}
}

func TestRender(t *testing.T) {
	got, err := Render(miniPages(miniREADME), miniFlags(), []byte(miniUnit))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		".TH NUMAIRQD 8 ",
		"\nFirst \\fIparagraph\\fR.\n.PP\nSecond, with \\fB\\-\\-x\\fR.\n.SH COMMANDS\n",
		"\\fBnumairqd plan [\\-\\-sysfs D] [\\-\\-format text|json]\\fR\n",
		"roots (see \\(lqA section\\(rq in docs/manual.md, \\(lqB\\(rq in docs/other.md, C)\n",
		".TP\n\\fBmatch.pci\\fR\na regexp\n.PP\nAll the \\fBmatch\\fR keys must match.\n",
		".TP\n\\fB/metrics\\fR\nmetrics\n.PP\nA request that finds them busy waits.\n.SS /status\n.TP\n\\fBversion\\fR\nthe version\n",
		".SS Each IRQ of a device\n.TP\n\\fBirq\\fR\nnumber\n",
		"\\fB\\-\\-format\\fR \\fIstring\\fR\ntext or json (default \"text\").\n",
		"sysfs root\\eto read.\n",
		"CPUs \\[u2212] none\n",
		".SH SIGNALS\nSIGHUP reloads.\n",
		"\\fBnumairqd_x_total\\fR\nxs\n.br\nA counter; labels: \\fBa\\fR.\n",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("rendering lacks %q:\n%s", want, got)
		}
	}
}

// TestRenderDrift: a flag the manual does not list, or lists but the
// command does not have, and a missing table are errors, not a page.
func TestRenderDrift(t *testing.T) {
	extra := miniFlags()
	extra["run"] = append(extra["run"], Flag{Name: "new-flag"})
	gone := miniFlags()
	gone["plan"] = gone["plan"][:1]
	for name, tc := range map[string]struct {
		readme string
		flags  map[string][]Flag
	}{
		"run flag not in the manual":   {miniREADME, extra},
		"plan flag only in the manual": {miniREADME, gone},
		"no rule key table":            {strings.Replace(miniREADME, "| rule key |", "| rule |", 1), miniFlags()},
		"no IRQ field table":           {strings.Replace(miniREADME, "| IRQ field |", "| IRQ |", 1), miniFlags()},
		"no errno table":               {strings.Replace(miniREADME, "| errno |", "| error |", 1), miniFlags()},
		"no signals paragraph":         {strings.Replace(miniREADME, "Signals:", "Signal:", 1), miniFlags()},
		"no topology row":              {strings.Replace(miniREADME, "`numairqd topology", "`numairqd topo", 1), miniFlags()},
		"row with a cell too many":     {strings.Replace(miniREADME, "| ENOENT | freed | count |", "| ENOENT | freed | count | x |", 1), miniFlags()},
		"intro without two paragraphs": {strings.Replace(miniREADME, "First *paragraph*.\n\n", "", 1), miniFlags()},
		"no policy table":              {strings.Replace(miniREADME, "| policy |", "| Policy |", 1), miniFlags()},
		"lock file not the default":    {strings.Replace(miniREADME, "| `/run/x.lock` | the lock (", "| `/run/y.lock` | the lock (", 1), miniFlags()},
		"files table names no flag":    {strings.Replace(miniREADME, "(`--lock-file`)", "(`--lock-path`)", 1), miniFlags()},
	} {
		if _, err := Render(miniPages(tc.readme), tc.flags, []byte(miniUnit)); !errors.Is(err, ErrDocs) {
			t.Errorf("%s: %v, want an ErrDocs", name, err)
		}
	}
}

// TestPageContent reads the checked-in page for what an operator looks
// up: every command numairqd's usage lists, in the synopsis and the
// commands; every policy the config accepts; the unit's own Type= and
// ExecReload=; and every section the page points to.
func TestPageContent(t *testing.T) {
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	man := string(b)
	section := func(name string) string {
		_, rest, ok := strings.Cut(man, "\n.SH "+name+"\n")
		if !ok {
			t.Fatalf("the page has no %s section", name)
		}
		if i := strings.Index(rest, "\n.SH "); i >= 0 {
			rest = rest[:i]
		}
		return rest
	}
	usage, err := exec.Command(buildNumairqd(t), "help").Output()
	if err != nil {
		t.Fatal(err)
	}
	_, list, _ := strings.Cut(string(usage), "commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	synopsis, commands := section("SYNOPSIS"), section("COMMANDS")
	for _, l := range strings.Split(list, "\n") {
		c := "\\fBnumairqd " + strings.Fields(l)[0]
		if !strings.Contains(synopsis, c) || !strings.Contains(commands, ".TP\n"+c) {
			t.Errorf("command %q of numairqd's usage is not in the synopsis and the commands", strings.Fields(l)[0])
		}
	}
	policies := section("POLICIES")
	for _, p := range config.PolicyNames() {
		if !strings.Contains(policies, ".TP\n\\fB"+strings.ReplaceAll(p, "-", "\\-")+"\\fR") {
			t.Errorf("policy %q is not described in POLICIES", p)
		}
	}
	unit, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	systemd := section("SYSTEMD")
	for _, k := range []string{"Type", "ExecReload"} {
		kv, err := unitKeys(unit, k)
		if err != nil {
			t.Fatal(err)
		}
		if want := ".TP\n\\fB" + k + "=\\fR\n" + roffCode(kv[0][1]) + "\n"; !strings.Contains(systemd, want) {
			t.Errorf("SYSTEMD does not give the unit's %s=%s", k, kv[0][1])
		}
	}
	if typ, _ := unitKeys(unit, "Type"); typ[0][1] != "notify-reload" && strings.Contains(man, "notify\\-reload") {
		t.Error("the page says notify-reload; the unit is Type=" + typ[0][1])
	}
	for _, ref := range regexp.MustCompile(`see (\w+) above`).FindAllStringSubmatch(man, -1) {
		if !strings.Contains(man, "\n.SS "+ref[1]+"\n") && !strings.Contains(man, "\n.SH "+strings.ToUpper(ref[1])+"\n") {
			t.Errorf("the page says %q but has no such section", ref[0])
		}
	}
}
