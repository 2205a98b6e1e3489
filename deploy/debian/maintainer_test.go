package debian

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// contactRE finds the README's contact line: "Contact: NAME <ADDRESS>".
var contactRE = regexp.MustCompile(`(?m)^Contact: (numairqd [^<>\n]+ <[^<>@\s]+@[^<>@\s]+>)`)

// TestMaintainerDocumented checks that every maintainer field of the
// package is the README's documented contact.
func TestMaintainerDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := contactRE.FindSubmatch(readme)
	if m == nil {
		t.Fatalf("README.md: no line %q", "Contact: numairqd ... <address>")
	}
	want := string(m[1])
	for _, c := range []struct{ file, prefix string }{
		{"control", "Maintainer: "},
		{"copyright", "Upstream-Contact: "},
		{"copyright", "Copyright: 2026 "}, // numairqd's own stanza, Files: *
		{"changelog", " -- "},
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, line := range strings.Split(string(b), "\n") {
			rest, ok := strings.CutPrefix(line, c.prefix)
			if !ok || !strings.Contains(rest, "@") {
				continue
			}
			found = true
			if c.file == "changelog" {
				rest, _, _ = strings.Cut(rest, ">  ")
				rest += ">"
			}
			if rest != want {
				t.Errorf("deploy/debian/%s: %s%s, want %s (README.md's Contact:)", c.file, c.prefix, rest, want)
			}
		}
		if !found {
			t.Errorf("deploy/debian/%s: no line %q", c.file, c.prefix+"...")
		}
	}
}
