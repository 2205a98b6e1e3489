package config

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// This file holds the help an error gives beyond what was wrong: the
// name a typo was meant to be, what a hex mask means as a CPU list, and
// the tab that broke the YAML.

// maxSuggest bounds the length of a word nearest compares: the edit
// distance is quadratic, and a long key is no typo.
const maxSuggest = 64

// nearest is the candidate a typo of s most likely meant: the closest
// by edit distance (insertions, deletions, substitutions; '_' and '-'
// are the same letter, as are the two cases), and only when close: at
// most 2 edits and at most a third of the longer word. "" when none is.
func nearest(s string, cands []string) string {
	if len(s) > maxSuggest {
		return ""
	}
	best, bestD := "", 3
	for _, c := range cands {
		d := editDistance(fold(s), fold(c))
		if d < bestD && 3*d <= max(len(s), len(c)) {
			best, bestD = c, d
		}
	}
	return best
}

// fold maps what a typo of a name often changes to one spelling.
func fold(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }

// editDistance is the optimal string alignment distance of a and b, by
// bytes: insertions, deletions, substitutions and swaps of two
// neighbours ("ture" is one edit from "true").
func editDistance(a, b string) int {
	pp, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
}

// didYouMean is "; did you mean X?" for the nearest of cands to s, ""
// when none is close.
func didYouMean(s string, cands []string) string {
	if c := nearest(s, cands); c != "" {
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

// tabLine is the first line, counted from 1, at or after from whose
// indentation holds a tab and that holds more than white space; 0 when
// none does. YAML indents with spaces only, and its parser's message
// ("found character that cannot start any token") does not say so.
func tabLine(data []byte, from int) int {
	for i, line := range bytes.Split(data, []byte("\n")) {
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
