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

// didYouMean is "; did you mean X?" for the nearest of cands to s, or "".
func didYouMean(s string, cands []string) string {
	if c := spell.Nearest(s, cands); c != "" {
		return fmt.Sprintf("; did you mean %s?", c)
	}
	return ""
}

// hexMask matches a hex mask, with 0x or in comma-separated groups.
var hexMask = regexp.MustCompile(`^(0[xX])?[0-9a-fA-F]+(,[0-9a-fA-F]+)*$`)

// hexHint explains a bad CPU list that has 0x or a hex letter as the hex
// mask it looks like; "" when it does not.
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

// hexGroups splits a hex mask into the kernel's groups of 8 digits.
func hexGroups(s string) string {
	var groups []string
	for len(s) > 8 {
		groups = append([]string{s[len(s)-8:]}, groups...)
		s = s[:len(s)-8]
	}
	return strings.Join(append([]string{s}, groups...), ",")
}

// tabLine is the first non-blank line from from to to with a tab indent, or 0.
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

// stringFor reports a string given where one of words is wanted, with
// the nearest word; false when n is not a string.
func (p *parser) stringFor(n *yaml.Node, path, want string, words ...string) bool {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return false
	}
	p.errorf(n, path, nil, "got %s%s (want %s)", describe(n), didYouMean(n.Value, words), want)
	return true
}
