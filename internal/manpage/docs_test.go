package manpage

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// root is the repository root, from this package's directory.
const root = "../.."

// TestReadmeIsALandingPage keeps README.md short, with the commands a
// new reader copies near the top: try it here, try it on a big box
// from a capture of the corpus, install, run the tests.
func TestReadmeIsALandingPage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 200 {
		t.Errorf("README.md has %d lines, want at most 200: the manual goes in docs/", len(lines))
	}
	top := strings.Join(lines[:min(100, len(lines))], "\n")
	for what, cmd := range map[string]string{
		"try it here":           "    go run ./cmd/numairqd run --dry-run\n",
		"try it on a big box":   "    go run ./cmd/numairqd plan --capture testdata/hosts/",
		"install (build)":       "    scripts/deb.sh ",
		"install (the package)": "    sudo dpkg -i dist/numairqd_",
		"run the tests":         "    ./scripts/test.sh\n",
	} {
		if !strings.Contains(top+"\n", cmd) {
			t.Errorf("README.md: the command to %s (%q) is not in its first 100 lines", what, strings.TrimSpace(cmd))
		}
	}
}

// TestReadmeQuotesResults checks that the README's comparison table
// quotes bench/RESULTS.md: the commit it names is the run's, and every
// figure with a decimal point or a unit in a cell of its tables that
// starts with a number is found in that file, so the README cannot keep
// figures of an older run.
func TestReadmeQuotesResults(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "bench", "RESULTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	results := string(b)
	m := regexp.MustCompile(`(?m)^\| commit \| ([0-9a-f]{7,}) \|$`).FindStringSubmatch(results)
	if m == nil {
		t.Fatal("bench/RESULTS.md: no commit row in its header")
	}
	if quoted := regexp.MustCompile("`bench/run.sh all` at ([0-9a-f]{7,})").FindStringSubmatch(string(readme)); quoted == nil || quoted[1] != m[1] {
		t.Errorf("README.md does not name bench/RESULTS.md's run (%s) as \"`bench/run.sh all` at %s\"", m[1], m[1])
	}
	figure := regexp.MustCompile(`\d+\.\d+( s)?|\d+ KiB`)
	n := 0
	for _, line := range strings.Split(string(readme), "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		for _, cell := range strings.Split(line, "|") {
			cell = strings.TrimSpace(cell)
			if cell == "" || cell[0] < '0' || cell[0] > '9' {
				continue // not a measured figure: text, a version
			}
			for _, f := range figure.FindAllString(cell, -1) {
				n++
				if !strings.Contains(results, f) {
					t.Errorf("README.md quotes %q, which bench/RESULTS.md does not hold: %s", f, line)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("README.md's tables quote %d figures, want the comparison table's (at least 10)", n)
	}
}

// TestManualLinks checks every relative link of README.md and docs/*.md:
// the file exists, and a section it names is a heading of that file.
func TestManualLinks(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"))
	checked := 0
	for _, page := range pages {
		links, err := relativeLinks(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links {
			checked++
			if err := checkLink(page, l); err != nil {
				t.Errorf("%s:%d: %s: %v", page, l.line, l.target, err)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d relative links found in README.md and docs/: the link parser is broken", checked)
	}
}

// TestCheckLink: a missing file and a missing heading are errors.
func TestCheckLink(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "a.md")
	text := "# A\n\n## Two words\n\n```\n## not a heading\n```\n"
	if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for target, ok := range map[string]bool{
		"#two-words": true, "a.md#a": true, "a.md": true,
		"#not-a-heading": false, "b.md": false, "a.md#three": false,
	} {
		if err := checkLink(page, link{target: target}); (err == nil) != ok {
			t.Errorf("checkLink(%q): %v, want ok %v", target, err, ok)
		}
	}
}

// TestSlug pins the anchors GitHub gives headings, which the links use.
func TestSlug(t *testing.T) {
	for h, want := range map[string]string{
		"Balance: count or load":         "balance-count-or-load",
		"`/plan` JSON":                   "plan-json",
		"Transmit steering (XPS)":        "transmit-steering-xps",
		"8.3 virtio-net (`drivers/net`)": "83-virtio-net-driversnet",
		"Flags of `run`":                 "flags-of-run",
		"Bans from cri-o and tuned":      "bans-from-cri-o-and-tuned",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}

// link is one relative link: its target as written and its line.
type link struct {
	target string
	line   int
}

// mdLink finds markdown links; code spans are cut out first.
var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpan = regexp.MustCompile("`[^`]*`")
)

// relativeLinks returns the links of a markdown file outside code that
// are not URLs.
func relativeLinks(page string) ([]link, error) {
	f, err := os.Open(page)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []link
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced || strings.HasPrefix(l, "    ") {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(l, ""), -1) {
			if t := m[1]; !strings.Contains(t, "://") && !strings.HasPrefix(t, "mailto:") {
				out = append(out, link{target: t, line: n})
			}
		}
	}
	return out, sc.Err()
}

// checkLink checks one link of page.
func checkLink(page string, l link) error {
	file, anchor, _ := strings.Cut(l.target, "#")
	path := page
	if file != "" {
		path = filepath.Join(filepath.Dir(page), file)
	}
	if _, err := os.Stat(path); err != nil {
		return err
	}
	if anchor == "" {
		return nil
	}
	if !strings.HasSuffix(path, ".md") {
		return fmt.Errorf("a section of %s, which is not markdown", path)
	}
	anchors, err := headingAnchors(path)
	if err != nil {
		return err
	}
	if !anchors[anchor] {
		return fmt.Errorf("%s has no heading #%s", path, anchor)
	}
	return nil
}

// headingAnchors returns the anchors of a markdown file's headings,
// outside code blocks.
func headingAnchors(path string) (map[string]bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	anchors := map[string]bool{}
	fenced := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
		}
		if h := strings.TrimLeft(l, "#"); !fenced && len(h) < len(l) && strings.HasPrefix(h, " ") {
			anchors[slug(h)] = true
		}
	}
	return anchors, nil
}

// slug is the anchor GitHub gives a heading: lower case, letters,
// digits, hyphens and underscores kept, spaces as hyphens, the rest
// dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
