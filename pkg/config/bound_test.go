package config

import (
	"fmt"
	"regexp/syntax"
	"runtime"
	"strings"
	"testing"
)

// amplified is a rule anchored with nbad unknown keys, listed again by
// alias naliases times: walking every alias would give nbad*naliases
// errors (900k lines, 109 MB for a 15 KB file).
func amplified(nbad, naliases int) string {
	var b strings.Builder
	b.WriteString("devices:\n  - &r\n    match: {driver: x}\n")
	for i := range nbad {
		fmt.Fprintf(&b, "    bad%d: 1\n", i)
	}
	for range naliases {
		b.WriteString("  - *r\n")
	}
	return b.String()
}

// maxErrText bounds the error text of any input: maxErrors lines of a
// clipped path and message, and the count line.
const maxErrText = 8 << 10

func TestParseAliasAmplification(t *testing.T) {
	input := []byte(amplified(300, 3000))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Parse(testFile, input)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("Parse succeeded")
	}
	text := err.Error()
	if len(text) > maxErrText {
		t.Errorf("error text is %d bytes, want at most %d", len(text), maxErrText)
	}
	lines := strings.Split(text, "\n")
	if len(lines) != maxErrors+1 {
		t.Fatalf("got %d error lines, want %d", len(lines), maxErrors+1)
	}
	// Each bad key once, at the anchor's lines, under the first use's path.
	for i, line := range lines[:maxErrors] {
		want := fmt.Sprintf("%s:%d: devices[0].bad%d: unknown key (want one of ", testFile, i+4, i)
		if !strings.HasPrefix(line, want) {
			t.Errorf("line %d\n got %s\nwant %s...", i, line, want)
		}
	}
	if got, want := lines[maxErrors], fmt.Sprintf("%s: ... and %d more errors", testFile, 300-maxErrors); got != want {
		t.Errorf("last line\n got %s\nwant %s", got, want)
	}
	// The file is 25 KB and Parse allocates about 1 MB for it (go1.27);
	// walking every alias took hundreds.
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Errorf("Parse allocated %d bytes, want at most 8 MiB", n)
	}
}

// TestParseAliasedRules checks a valid rule listed by alias gives equal
// rules, each at the anchor's line.
func TestParseAliasedRules(t *testing.T) {
	c, err := Parse(testFile, []byte(doc(
		"devices:",
		"  - &r",
		"    match: {driver: x}",
		"    policy: pinned",
		"    cpus: &c 0-3",
		"  - *r",
		"  - {match: {driver: y}, policy: pinned, cpus: *c}",
		"  - *r",
	)))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Devices) != 4 {
		t.Fatalf("got %d rules", len(c.Devices))
	}
	for _, i := range []int{1, 3} {
		if r := c.Devices[i]; r.Line != 2 || r.Policy != PolicyPinned || !r.CPUs.Equal(c.Devices[0].CPUs) || r.Match.Driver.String() != "^(?:x)$" {
			t.Errorf("rule %d = %+v", i, r)
		}
	}
	if r := c.Devices[2]; r.Line != 7 || !r.CPUs.Equal(c.Devices[0].CPUs) || r.Match.Driver.String() != "^(?:y)$" {
		t.Errorf("rule 2 = %+v", r)
	}
}

// TestParseSharedBadValue checks an alias to a bad value, used by many
// rules, is reported once.
func TestParseSharedBadValue(t *testing.T) {
	input := "devices:\n  - {match: {driver: &re '('}, policy: &p nope}\n" +
		strings.Repeat("  - {match: {driver: *re}, policy: *p}\n", 1000)
	_, err := Parse(testFile, []byte(input))
	if err == nil {
		t.Fatal("Parse succeeded")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], testFile+":2: devices[0].match.driver: invalid regexp") ||
		!strings.HasPrefix(lines[1], testFile+":2: devices[0].policy: unknown policy \"nope\"") {
		t.Errorf("got\n%v", err)
	}
}

func TestParseErrorLimit(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "bad%d: 1\n", i)
	}
	b.WriteString("listen: x\n")
	_, err := Parse(testFile, []byte(b.String()))
	if err == nil {
		t.Fatal("Parse succeeded")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != maxErrors+1 {
		t.Fatalf("got %d lines, want %d:\n%v", len(lines), maxErrors+1, err)
	}
	for i, line := range lines[:maxErrors] {
		if want := fmt.Sprintf("%s:%d: bad%d: unknown key", testFile, i+1, i); !strings.HasPrefix(line, want) {
			t.Errorf("line %d\n got %s\nwant %s...", i, line, want)
		}
	}
	if want := testFile + ": ... and 31 more errors"; lines[maxErrors] != want {
		t.Errorf("last line\n got %s\nwant %s", lines[maxErrors], want)
	}
}

// TestParseLongValues checks a key or value of any length gives an error
// line of bounded length that still ends with what was wanted.
func TestParseLongValues(t *testing.T) {
	long := strings.Repeat("é", 200<<10)
	for name, input := range map[string]string{
		"key":          long + ": 1\n",
		"policy":       "devices:\n  - {match: {driver: x}, policy: " + long + "}\n",
		"regexp":       "devices:\n  - match: {driver: '(" + long + "'}\n",
		"queue_regex":  "devices:\n  - {match: {driver: x}, queue_regex: '" + long + "'}\n",
		"listen":       "listen: " + long + "\n",
		"banned_cpus":  "banned_cpus: 1," + long + "\n",
		"duration":     "resync_interval: " + long + "\n",
		"tag":          "listen: !" + strings.Repeat("t", 100<<10) + " x\n",
		"rule key":     "devices:\n  - {match: {driver: x}, " + long + ": 1}\n",
		"non-str keys": "? [" + long + "]\n: 1\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(testFile, []byte(input))
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			for line := range strings.SplitSeq(err.Error(), "\n") {
				if len(line) > len(testFile)+10+maxPath+maxMsg {
					t.Errorf("error line is %d bytes: %.200s...", len(line), line)
				}
				if !strings.HasPrefix(line, testFile+":") {
					t.Errorf("error line does not name the file: %.200s", line)
				}
			}
		})
	}
}

func TestParseTooLarge(t *testing.T) {
	_, err := Parse(testFile, []byte("#"+strings.Repeat("x", maxSize)))
	want := fmt.Sprintf("%s: %d bytes is larger than the limit of %d bytes (want a file of at most 1 MiB)", testFile, maxSize+1, maxSize)
	if err == nil || err.Error() != want {
		t.Errorf("error\n got %v\nwant %s", err, want)
	}
}

func TestClip(t *testing.T) {
	for _, tt := range []struct {
		s    string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"0123456789", 10, "0123456789"},
		{"0123456789abcdef", 11, "012 ... def"},
		{"ééééééé", 9, "é ... é"},                                   // never splits a rune
		{"alpha beta gamma delta epsilon", 20, "alpha ... epsilon"}, // never splits a word
		{"alpha beta gamma", 15, "alpha ... gamma"},
		{"unknown key (want one of a, bb, ccc, dddd, eeeee)", 40, "unknown key (want ... ccc, dddd, eeeee)"},
	} {
		if got := clip(tt.s, tt.max); got != tt.want || len(got) > tt.max {
			t.Errorf("clip(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
		}
	}
}

// TestProgSize checks progSize bounds the compiled size from above, so
// maxRegexpSize bounds what is compiled.
func TestProgSize(t *testing.T) {
	for _, s := range []string{
		"", "a", "mlx5_core", "eth[0-9]+", "(?i)eth0", "a{1,1000}", "a{1000}", "a{3,}", "(ab|cd){2,5}x*",
		"(?P<queue>[0-9]+)$", "((a{2,3}){4,5}){6,7}", "[^a-z]|\\pL+|.", "a{0}", "(a|b|c|d|e)?",
	} {
		re, err := syntax.Parse(s, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		anchored, err := syntax.Parse("^(?:"+s+")$", syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := syntax.Compile(anchored.Simplify())
		if err != nil {
			t.Fatal(err)
		}
		if got := regexpCost + progSize(re); got < len(prog.Inst) {
			t.Errorf("%q: estimate %d, compiled to %d instructions", s, got, len(prog.Inst))
		}
	}
}

func TestParseRegexpBudget(t *testing.T) {
	// Each a{1,1000} is about 2000 instructions: about 100 fit.
	input := "devices:\n" + strings.Repeat("  - {match: {driver: 'a{1,1000}'}}\n", 200)
	_, err := Parse(testFile, []byte(input))
	if err == nil {
		t.Fatal("Parse succeeded")
	}
	first := strings.SplitN(err.Error(), "\n", 2)[0]
	if !strings.Contains(first, `.match.driver: regexp "a{1,1000}" is too large: with the regexps before it, it compiles to more than 200000 instructions`) {
		t.Errorf("got %v", err)
	}
	// Aliases share one compiled regexp: they cost nothing more.
	input = "devices:\n  - {match: {driver: &re 'a{1,1000}'}}\n" + strings.Repeat("  - {match: {driver: *re}}\n", 1000)
	if _, err := Parse(testFile, []byte(input)); err != nil {
		t.Errorf("aliased regexps: %v", err)
	}
}

func TestParseMaxRules(t *testing.T) {
	rule := "  - {match: {driver: d}}\n"
	if c, err := Parse(testFile, []byte("devices:\n"+strings.Repeat(rule, maxRules))); err != nil || len(c.Devices) != maxRules {
		t.Errorf("%d rules: %v", maxRules, err)
	}
	_, err := Parse(testFile, []byte("devices:\n"+strings.Repeat(rule, maxRules+1)))
	if want := fmt.Sprintf("%s:2: devices: %d rules is more than the limit of %d (want at most %d rules)", testFile, maxRules+1, maxRules, maxRules); err == nil || err.Error() != want {
		t.Errorf("error\n got %v\nwant %s", err, want)
	}
}
