package config

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/numairqd/numairqd/internal/spell"
	"github.com/numairqd/numairqd/pkg/cpumask"
)

// This file holds the help an error gives beyond what was wrong: the
// name a typo was meant to be, what a hex mask means as a CPU list, and
// the tab that broke the YAML.

// didYouMean is "; did you mean X?" for the nearest of cands to s, ""
// when none is close.
func didYouMean(s string, cands []string) string {
	if c := spell.Nearest(s, cands); c != "" {
		return fmt.Sprintf("; did you mean %s?", c)
	}
	return ""
}

// hexMask matches what irqbalance users write for a CPU set: a hex mask,
// with 0x or in the kernel's comma-separated groups.
var hexMask = regexp.MustCompile(`^(0[xX])?[0-9a-fA-F]+(,[0-9a-fA-F]+)*$`)

// hexHint explains a CPU list that did not parse but reads as a hex
// mask, with the list it stands for; "" when s does not look like one.
// Only a value with 0x or a hex letter looks like one: "10" is CPU 10.
func hexHint(s string) string {
	if !hexMask.MatchString(s) || !strings.HasPrefix(strings.ToLower(s), "0x") && !strings.ContainsAny(strings.ToLower(s), "abcdef") {
		return ""
	}
	body := s
	if strings.HasPrefix(strings.ToLower(s), "0x") {
		body = s[2:]
	}
	if !strings.Contains(body, ",") {
		body = hexGroups(body)
	}
	m, err := cpumask.ParseHex(body)
	if err != nil {
		return ""
	}
	cpus := "no CPU"
	if !m.IsEmpty() {
		cpus = "CPUs " + m.String()
	}
	return fmt.Sprintf("%q looks like a hex mask; numairqd takes CPU lists like 0-3; hex mask %s is %s", s, s, cpus)
}

// hexGroups splits an ungrouped hex mask into the kernel's groups of 8
// digits, from the right, which cpumask.ParseHex reads: irqbalance
// users write masks of more than 32 CPUs without commas.
func hexGroups(s string) string {
	var groups []string
	for len(s) > 8 {
		groups = append([]string{s[len(s)-8:]}, groups...)
		s = s[:len(s)-8]
	}
	return strings.Join(append([]string{s}, groups...), ",")
}

// tabLine is the first line from from to to, counted from 1, whose
// indentation holds a tab and that holds more than white space; 0 when
// none does. YAML indents with spaces only, and its parser's message
// ("found character that cannot start any token") does not say so.
func tabLine(data []byte, from, to int) int {
	for i, line := range bytes.Split(data, []byte("\n")) {
		if i+1 > to {
			break
		}
		indent := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		if i+1 >= from && bytes.IndexByte(indent, '\t') >= 0 && len(bytes.TrimSpace(line)) > 0 {
			return i + 1
		}
	}
	return 0
}

// stringFor reports a string scalar given where one of words (a
// boolean, "auto") is wanted, with the word it was likely meant to be;
// false when n is not a string.
func (p *parser) stringFor(n *yaml.Node, path, want string, words ...string) bool {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return false
	}
	p.errorf(n, path, nil, "got %s%s (want %s)", describe(n), didYouMean(n.Value, words), want)
	return true
}
