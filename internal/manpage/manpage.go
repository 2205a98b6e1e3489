// Package manpage renders numairqd(8) from what already documents the
// command: the tables and paragraphs of README.md and the manual in
// docs/ (Sources), and the flag help the commands print for -h.
// Rendering fails when the two disagree on which flags exist, so the
// page cannot drift from the code or the manual; the test in this
// package compares the rendering with the checked-in page
// (deploy/debian/numairqd.8) and rewrites it under -update. The other
// tests here keep README.md a landing page and every relative link of
// the manual pointing somewhere.
package manpage

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// ErrDocs is wrapped by the errors about the manual: a table or
// paragraph the page is made of is missing, or a flag it lists is not
// the command's.
var ErrDocs = errors.New("README.md and docs/")

// Sources are the files the page is made of, from the repository root:
// the description is README.md's, each table and paragraph the first
// found in this order.
var Sources = []string{"README.md", "docs/operations.md", "docs/install.md", "docs/configuration.md", "docs/placement.md"}

// Page is one markdown file of Sources: its path from the repository
// root, which names it in the page's references to its sections, and
// its text.
type Page struct {
	Path string
	Text []byte
}

// Commands are the subcommands with flags, whose options the page
// lists in this order.
var Commands = []string{"run", "plan", "topology", "status", "reload"}

// Flag is one flag as the flag package prints it for -h.
type Flag struct {
	Name    string // without dashes: "config", "log.level"
	Arg     string // the value's placeholder ("string", "FILE"); "" for a bool
	Usage   string // the help text, without the default
	Default string // as printed after "(default ", with its quotes; "" when zero
}

// flagLine is the first line PrintDefaults prints for a flag: two
// spaces, the name with one dash, and the value's placeholder.
var flagLine = regexp.MustCompile(`^  -(\S+)(?: (\S+))?$`)

// defaultSuffix is what PrintDefaults appends to a non-zero default.
var defaultSuffix = regexp.MustCompile(` \(default (.*)\)$`)

// ParseFlags reads the -h output of a flag.FlagSet (flag.PrintDefaults,
// after the "Usage of NAME:" line): the flags in name order.
func ParseFlags(help string) ([]Flag, error) {
	var flags []Flag
	for _, line := range strings.Split(strings.TrimRight(help, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "Usage of "), strings.HasPrefix(line, "usage: "):
		case strings.HasPrefix(line, "    \t"):
			if len(flags) == 0 {
				return nil, fmt.Errorf("flag help: usage text %q before any flag", line)
			}
			f := &flags[len(flags)-1]
			if f.Usage != "" {
				f.Usage += " "
			}
			f.Usage += strings.TrimPrefix(line, "    \t")
		default:
			m := flagLine.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("flag help: unexpected line %q", line)
			}
			flags = append(flags, Flag{Name: m[1], Arg: m[2]})
		}
	}
	for i := range flags {
		if m := defaultSuffix.FindStringSubmatch(flags[i].Usage); m != nil {
			flags[i].Default = m[1]
			flags[i].Usage = strings.TrimSuffix(flags[i].Usage, m[0])
		}
	}
	if len(flags) == 0 {
		return nil, errors.New("flag help: no flags")
	}
	return flags, nil
}

// Render returns numairqd(8) in man(7) markup, from the pages of
// Sources (the first is README.md), the parsed -h output of each of
// Commands and the systemd unit: every sentence of the page is one of
// theirs.
func Render(pages []Page, flags map[string][]Flag, unit []byte) ([]byte, error) {
	if len(pages) == 0 {
		return nil, fmt.Errorf("%w: no pages", ErrDocs)
	}
	doc := make(manual, len(pages))
	for i, pg := range pages {
		doc[i] = markdown{path: pg.Path, text: string(pg.Text)}
	}
	var p parts
	p.intro, p.err = doc[0].intro(2)
	cmds := p.table(doc, "command", "what it does")
	runFlags := p.table(doc, "flag", "default", "meaning")
	exits := p.table(doc, "exit status", "meaning")
	files := p.table(doc, "file", "what it is")
	policies := p.table(doc, "policy", "rule", "example")
	config := p.table(doc, "key", "default", "meaning")
	rules := p.table(doc, "rule key", "meaning")
	endpoints := p.table(doc, "endpoint", "what it answers")
	var fields [][][]string
	for _, of := range []string{"`/status` field", "`/plan` field", "device field", "IRQ field"} {
		fields = append(fields, p.table(doc, of, "what it holds"))
	}
	metrics := p.table(doc, "metric", "type", "labels", "meaning")
	errnos := p.table(doc, "errno", "meaning", "what numairqd does")
	paras := map[string]string{}
	for _, start := range []string{"Allowed CPUs =", "Worked example", "`balance` says how", "`configs/numairqd.yaml` is", "and a file with any error",
		"Signals:", "All the `match` keys", "On `listen`", "A request that finds", "systemd: `READY=1`"} {
		paras[start] = p.paragraph(doc, start)
	}
	if p.err != nil {
		return nil, p.err
	}
	service, err := unitKeys(unit, "Type", "ExecReload", "Conflicts", "WatchdogSec")
	if err != nil {
		return nil, err
	}
	if err := sameFlags("run", flags["run"], runFlags, 0); err != nil {
		return nil, err
	}
	for _, c := range Commands[1:] {
		row := slices.IndexFunc(cmds, func(r []string) bool { return strings.HasPrefix(r[0], "`numairqd "+c+" ") })
		if row < 0 {
			return nil, fmt.Errorf("%w: the commands table has no row for %q", ErrDocs, c)
		}
		if err := sameFlags(c, flags[c], cmds[row:row+1], 0); err != nil {
			return nil, err
		}
	}
	if err := sameDefaults(files, runFlags, flags["run"]); err != nil {
		return nil, err
	}

	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w(".\\\" Generated by internal/manpage from %s, the commands' -h output and deploy/systemd/numairqd.service.\n", strings.Join(Sources, ", "))
	w(".\\\" Do not edit: change those and run go test ./internal/manpage -update.\n")
	w(".TH NUMAIRQD 8 \"\" \"numairqd\" \"System Administration\"\n")
	w(".SH NAME\nnumairqd \\- place multi-queue devices' IRQs by NUMA distance, and keep them there\n")
	w(".SH SYNOPSIS\n")
	for i, r := range cmds {
		if i > 0 {
			w(".br\n")
		}
		w("%s\n", inline(r[0]))
	}
	w(".SH DESCRIPTION\n")
	for i, para := range p.intro {
		if i > 0 {
			w(".PP\n")
		}
		w("%s\n", inline(para))
	}
	w(".SH COMMANDS\n")
	for _, r := range cmds {
		w(".TP\n%s\n%s\n", inline(r[0]), inline(r[1]))
	}
	w(".SH OPTIONS\nOptions of \\fBrun\\fR:\n")
	for _, r := range runFlags {
		w(".TP\n%s\n%s\n.br\nDefault: %s.\n", inline(r[0]), inline(r[2]), inline(r[1]))
	}
	for _, c := range Commands[1:] {
		w(".PP\nOptions of \\fB%s\\fR:\n", c)
		for _, f := range flags[c] {
			w(".TP\n\\fB\\-\\-%s\\fR", roffCode(f.Name))
			if f.Arg != "" {
				w(" \\fI%s\\fR", escape(f.Arg))
			}
			w("\n%s", escape(f.Usage))
			if f.Default != "" {
				w(" (default %s)", escape(f.Default))
			}
			w(".\n")
		}
	}
	w(".SH POLICIES\n%s\n.PP\n%s\n", inline(paras["Allowed CPUs ="]), inline(paras["Worked example"]))
	for _, r := range policies {
		w(".TP\n%s\n%s\n", inline(r[0]), inline(r[1]))
		if r[2] != "" {
			w(".br\nExample: %s\n", inline(r[2]))
		}
	}
	w(".SS Balance\n%s\n", inline(paras["`balance` says how"]))
	w(".SH CONFIGURATION\n%s\n.PP\n%s\n", inline(paras["`configs/numairqd.yaml` is"]), inline(paras["and a file with any error"]))
	for _, r := range config {
		w(".TP\n%s\n%s\n.br\nDefault: %s.\n", inline(r[0]), inline(r[2]), inline(r[1]))
	}
	w(".PP\nEach rule of \\fBdevices\\fR has:\n")
	for _, r := range rules {
		w(".TP\n%s\n%s\n", inline(r[0]), inline(r[1]))
	}
	w(".PP\n%s\n", inline(paras["All the `match` keys"]))
	w(".SH SIGNALS\n%s\n", inline(strings.TrimPrefix(paras["Signals:"], "Signals: ")))
	w(".SH HTTP\n%s\n", inline(paras["On `listen`"]))
	for _, r := range endpoints {
		w(".TP\n%s\n%s\n", inline(r[0]), inline(r[1]))
	}
	w(".PP\n%s\n", inline(paras["A request that finds"]))
	for i, title := range []string{"/status", "/plan", "Each device of /plan", "Each IRQ of a device"} {
		w(".SS %s\n", title)
		for _, r := range fields[i] {
			w(".TP\n%s\n%s\n", inline(r[0]), inline(r[1]))
		}
	}
	w(".SS Metrics\n")
	for _, r := range metrics {
		w(".TP\n%s\n%s\n", inline(r[0]), inline(r[3]))
		if r[1] != "" {
			w(".br\nA %s", inline(r[1]))
			if r[2] != "" {
				w("; labels: %s", inline(r[2]))
			}
			w(".\n")
		}
	}
	w(".SH SYSTEMD\n%s\n", inline(strings.TrimPrefix(paras["systemd: `READY=1`"], "systemd: ")))
	w(".PP\nThe unit \\fBnumairqd.service\\fR has:\n")
	for _, kv := range service {
		w(".TP\n\\fB%s=\\fR\n%s\n", kv[0], roffCode(kv[1]))
	}
	w(".SH DIAGNOSTICS\nKernel errors on writing an affinity are handled by kind:\n")
	for _, r := range errnos {
		w(".TP\n%s\n%s: %s\n", inline(r[0]), inline(r[1]), inline(r[2]))
	}
	w(".SH EXIT STATUS\n")
	for _, r := range exits {
		w(".TP\n%s\n%s\n", inline(r[0]), inline(r[1]))
	}
	w(".SH FILES\n")
	for _, r := range files {
		w(".TP\n%s\n%s\n", inline(r[0]), inline(r[1]))
	}
	w(".SH SEE ALSO\n.BR irqbalance (1),\n.BR systemctl (1),\n.BR systemd.service (5)\n")
	return b.Bytes(), nil
}

// parts collects the manual's pieces, keeping the first error, so that
// Render reads them in one list.
type parts struct {
	intro []string
	err   error
}

func (p *parts) table(doc manual, header ...string) [][]string {
	if p.err != nil {
		return nil
	}
	var rows [][]string
	rows, p.err = doc.table(header...)
	return rows
}

func (p *parts) paragraph(doc manual, start string) string {
	if p.err != nil {
		return ""
	}
	var para string
	para, p.err = doc.paragraph(start)
	return para
}

// unitKeys returns the values of keys in a systemd unit, in keys' order,
// with the binary's directory cut from Exec lines (the package installs
// it elsewhere than the unit in the repository says). Each key must be
// set once.
func unitKeys(unit []byte, keys ...string) ([][2]string, error) {
	var out [][2]string
	for _, k := range keys {
		var vals []string
		for _, l := range strings.Split(string(unit), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), k+"="); ok {
				vals = append(vals, v)
			}
		}
		if len(vals) != 1 {
			return nil, fmt.Errorf("numairqd.service: %s= is set %d times, want once", k, len(vals))
		}
		v := vals[0]
		if strings.HasPrefix(k, "Exec") {
			bin, args, _ := strings.Cut(v, " ")
			v = strings.TrimSpace(bin[strings.LastIndex(bin, "/")+1:] + " " + args)
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

// sameDefaults checks that each file the files table names with a flag,
// as (`--flag`), is that flag's default in the flags table and in the
// command's own -h.
func sameDefaults(files, runFlags [][]string, flags []Flag) error {
	for _, r := range files {
		m := longFlag.FindStringSubmatch(r[1])
		if m == nil {
			continue
		}
		path := strings.Trim(r[0], "`")
		i := slices.IndexFunc(flags, func(f Flag) bool { return f.Name == m[1] })
		if i < 0 {
			return fmt.Errorf("%w: files table: %s names --%s, which run does not have", ErrDocs, r[0], m[1])
		}
		if d := flags[i].Default; !strings.Contains(d, path) {
			return fmt.Errorf("%w: files table: %s, but run --%s defaults to %s", ErrDocs, path, m[1], d)
		}
		row := slices.IndexFunc(runFlags, func(f []string) bool { return strings.HasPrefix(f[0], "`--"+m[1]+" ") })
		if row < 0 || !strings.Contains(runFlags[row][1], path) {
			return fmt.Errorf("%w: files table: %s is not the default the flags table gives --%s", ErrDocs, path, m[1])
		}
	}
	return nil
}

// longFlag finds the flags a table cell names: `--name`, `--name ARG`.
var longFlag = regexp.MustCompile("--([a-z][a-z0-9.-]*)")

// sameFlags checks that the flags named in column col of rows are
// exactly the command's own.
func sameFlags(cmd string, flags []Flag, rows [][]string, col int) error {
	if len(flags) == 0 {
		return fmt.Errorf("no flags for %q", cmd)
	}
	var inDocs []string
	for _, r := range rows {
		for _, m := range longFlag.FindAllStringSubmatch(r[col], -1) {
			inDocs = append(inDocs, m[1])
		}
	}
	var inCode []string
	for _, f := range flags {
		inCode = append(inCode, f.Name)
	}
	slices.Sort(inDocs)
	inDocs = slices.Compact(inDocs)
	slices.Sort(inCode)
	if !slices.Equal(inDocs, inCode) {
		return fmt.Errorf("%w: flags of %q: the manual lists %v, numairqd %s -h %v", ErrDocs, cmd, inDocs, cmd, inCode)
	}
	return nil
}

// markdown is one page of the manual: its path from the repository
// root and its text.
type markdown struct{ path, text string }

func (d markdown) lines() []string { return strings.Split(d.text, "\n") }

// intro returns the first n paragraphs after the title.
func (d markdown) intro(n int) ([]string, error) {
	lines := d.lines()
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "# ") {
		return nil, fmt.Errorf("%w: %s: no title on the first line", ErrDocs, d.path)
	}
	var paras []string
	var cur []string
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			if len(cur) > 0 {
				paras = append(paras, d.resolve(strings.Join(cur, " ")))
				cur = nil
				if len(paras) == n {
					return paras, nil
				}
			}
			continue
		}
		if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "```") || strings.HasPrefix(l, "|") {
			break
		}
		cur = append(cur, l)
	}
	return nil, fmt.Errorf("%w: %s: fewer than %d paragraphs before the first heading, table or code block", ErrDocs, d.path, n)
}

// paragraph returns the paragraph whose first line starts with start,
// joined into one line; ok is false when there is none.
func (d markdown) paragraph(start string) (para string, ok bool) {
	lines := d.lines()
	for i, l := range lines {
		if !strings.HasPrefix(l, start) || i > 0 && strings.TrimSpace(lines[i-1]) != "" {
			continue
		}
		var p []string
		for _, l := range lines[i:] {
			if strings.TrimSpace(l) == "" {
				break
			}
			p = append(p, strings.TrimSpace(l))
		}
		return d.resolve(strings.Join(p, " ")), true
	}
	return "", false
}

// table returns the rows of the table with this header, each with
// exactly as many cells; rows is nil when there is no such table.
func (d markdown) table(header ...string) (rows [][]string, err error) {
	want := "| " + strings.Join(header, " | ") + " |"
	lines := d.lines()
	i := slices.Index(lines, want)
	if i < 0 || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "|---") {
		return nil, nil
	}
	for _, l := range lines[i+2:] {
		if !strings.HasPrefix(l, "|") {
			break
		}
		cells := cells(l)
		if len(cells) != len(header) {
			return nil, fmt.Errorf("%w: %s: table %q: row %q has %d cells, want %d", ErrDocs, d.path, want, l, len(cells), len(header))
		}
		for c := range cells {
			cells[c] = d.resolve(cells[c])
		}
		rows = append(rows, cells)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%w: %s: table %q has no rows", ErrDocs, d.path, want)
	}
	return rows, nil
}

// relLink finds the targets of a text's links that are neither URLs nor
// absolute paths.
var relLink = regexp.MustCompile(`\]\(([^)#:/][^)#:]*)?(#[^)]*)?\)`)

// resolve rewrites the relative links of s as paths from the repository
// root, and a bare anchor as one in this page, so that a reference
// names its file wherever the text goes.
func (d markdown) resolve(s string) string {
	return relLink.ReplaceAllStringFunc(s, func(m string) string {
		sub := relLink.FindStringSubmatch(m)
		target := d.path
		if sub[1] != "" {
			target = path.Join(path.Dir(d.path), sub[1])
		}
		return "](" + target + sub[2] + ")"
	})
}

// manual is the pages of Sources, in order.
type manual []markdown

// table returns the first table with this header in the manual.
func (m manual) table(header ...string) ([][]string, error) {
	for _, d := range m {
		if rows, err := d.table(header...); rows != nil || err != nil {
			return rows, err
		}
	}
	return nil, fmt.Errorf("%w: no table %q", ErrDocs, "| "+strings.Join(header, " | ")+" |")
}

// paragraph returns the first paragraph starting with start in the
// manual.
func (m manual) paragraph(start string) (string, error) {
	for _, d := range m {
		if p, ok := d.paragraph(start); ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: no paragraph starting %q", ErrDocs, start)
}

// cells splits a table row at the pipes that are not escaped (`\|`).
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(strings.TrimSuffix(row, "|"), "|")
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case row[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// span is one piece of inline markdown: code, a link, bold or italic
// text; the rest is plain.
var span = regexp.MustCompile("`([^`]+)`|\\[([^\\]]+)\\]\\(([^)]+)\\)|\\*\\*([^*]+)\\*\\*|\\*([^*\\s][^*]*)\\*")

// inline converts a line of markdown to man(7) text: code and bold in
// bold, emphasis in italics, a link as its text (a link to a section,
// its target resolved from the repository root, as a reference to that
// file's section).
func inline(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range span.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(escape(s[last:m[0]]))
		last = m[1]
		sub := func(i int) string { return s[m[2*i]:m[2*i+1]] }
		switch {
		case m[2] >= 0:
			b.WriteString(`\fB` + roffCode(sub(1)) + `\fR`)
		case m[4] >= 0:
			if file, _, ok := strings.Cut(sub(3), "#"); ok {
				b.WriteString(`\(lq` + inline(sub(2)) + `\(rq in ` + escape(file))
			} else {
				b.WriteString(inline(sub(2)))
			}
		case m[8] >= 0:
			b.WriteString(`\fB` + inline(sub(4)) + `\fR`)
		default:
			b.WriteString(`\fI` + inline(sub(5)) + `\fR`)
		}
	}
	b.WriteString(escape(s[last:]))
	out := b.String()
	if strings.HasPrefix(out, ".") || strings.HasPrefix(out, "'") {
		out = `\&` + out
	}
	return out
}

// roffCode escapes code: its hyphens are minus signs, so that a
// copied option works.
func roffCode(s string) string {
	return strings.ReplaceAll(escape(s), "-", `\-`)
}

// escape makes text safe in man(7): backslashes escaped, characters
// beyond ASCII as groff's \[uXXXX], so the page needs no encoding.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r > 0x7e:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
