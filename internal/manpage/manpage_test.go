package manpage

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite "+page+" from the README and the flags")

// page is the checked-in numairqd(8), which scripts/deb.sh packages.
const page = "../../deploy/debian/numairqd.8"

// TestPageIsCurrent renders the page from the README and the -h output
// of a freshly built numairqd and compares it with the checked-in one:
// the CI check that neither the flags nor the README's tables changed
// without it. go test ./internal/manpage -update rewrites it.
func TestPageIsCurrent(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Render(readme, helpOf(t, buildNumairqd(t)))
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
		t.Errorf("%s is stale: the README or the flags changed; run go test ./internal/manpage -update\n%s", page, firstDiff(got, want))
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
	"| command | what it does |\n|---|---|\n" +
	"| `numairqd [run] [flags]` | the daemon |\n" +
	"| `numairqd plan [--sysfs D] [--format text\\|json]` | print |\n" +
	"| `numairqd topology [--sysfs D]` | print |\n\n" +
	"| flag | default | meaning |\n|---|---|---|\n" +
	"| `--sysfs DIR`, `--procfs DIR` | `/sys`, `/proc` | roots (see [A section](#a-section)) |\n\n" +
	"Signals: SIGHUP reloads.\n\n" +
	"| key | default | meaning |\n|---|---|---|\n| `banned_cpus` | `\"\"` | CPUs − none |\n\n" +
	"A rule: `match`.\n\n" +
	"On `listen` (default `127.0.0.1:9768`): `/metrics`.\n\n" +
	"| metric | type | labels | meaning |\n|---|---|---|---|\n| `numairqd_x_total` | counter | `a` | xs |\n\n" +
	"systemd: `READY=1` after the first round.\n\n" +
	"| errno | meaning | what numairqd does |\n|---|---|---|\n| ENOENT | freed | count |\n"

func miniFlags() map[string][]Flag {
	return map[string][]Flag{
		"run":      {{Name: "sysfs", Arg: "string"}, {Name: "procfs", Arg: "string"}},
		"plan":     {{Name: "sysfs", Arg: "string"}, {Name: "format", Arg: "string", Usage: "text or json", Default: `"text"`}},
		"topology": {{Name: "sysfs", Arg: "string", Usage: `sysfs root\to read`}},
	}
}

func TestRender(t *testing.T) {
	got, err := Render([]byte(miniREADME), miniFlags())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		".TH NUMAIRQD 8 ",
		"\nFirst \\fIparagraph\\fR.\n.PP\nSecond, with \\fB\\-\\-x\\fR.\n.SH COMMANDS\n",
		"\\fBnumairqd plan [\\-\\-sysfs D] [\\-\\-format text|json]\\fR\n",
		"roots (see \\(lqA section\\(rq in README.md)\n",
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

// TestRenderDrift: a flag the README does not list, or lists but the
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
		"run flag not in README":       {miniREADME, extra},
		"plan flag only in README":     {miniREADME, gone},
		"no errno table":               {strings.Replace(miniREADME, "| errno |", "| error |", 1), miniFlags()},
		"no signals paragraph":         {strings.Replace(miniREADME, "Signals:", "Signal:", 1), miniFlags()},
		"no topology row":              {strings.Replace(miniREADME, "`numairqd topology", "`numairqd topo", 1), miniFlags()},
		"row with a cell too many":     {strings.Replace(miniREADME, "| ENOENT | freed | count |", "| ENOENT | freed | count | x |", 1), miniFlags()},
		"intro without two paragraphs": {strings.Replace(miniREADME, "First *paragraph*.\n\n", "", 1), miniFlags()},
	} {
		if _, err := Render([]byte(tc.readme), tc.flags); !errors.Is(err, ErrREADME) {
			t.Errorf("%s: %v, want an ErrREADME", name, err)
		}
	}
}
