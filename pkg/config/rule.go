package config

import (
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// Policy names how a device's IRQs are spread over CPUs.
type Policy string

const (
	// PolicyAuto is PolicyLinear with queues >= allowed CPUs, else NUMAHop.
	PolicyAuto Policy = "auto"
	// PolicyNUMAHop spreads queues from the device's node out by distance.
	PolicyNUMAHop Policy = "numa-hop"
	// PolicyLinear gives queue i the i-th allowed CPU in id order.
	PolicyLinear Policy = "linear"
	// PolicyPinned spreads the queues over the rule's CPUs only.
	PolicyPinned Policy = "pinned"
	// PolicyIgnore leaves the device's IRQs as they are.
	PolicyIgnore Policy = "ignore"
)

var policies = []Policy{PolicyAuto, PolicyNUMAHop, PolicyLinear, PolicyPinned, PolicyIgnore}

// MaskMode says what an IRQ's affinity mask holds once a CPU is chosen.
type MaskMode string

const (
	// MaskCPU writes the chosen CPU alone.
	MaskCPU MaskMode = "cpu"
	// MaskCore writes the chosen CPU's whole SMT sibling mask.
	MaskCore MaskMode = "core"
)

var maskModes = []MaskMode{MaskCPU, MaskCore}

// Rule is one entry of devices: what it matches and how to place their IRQs.
type Rule struct {
	Name  string // free text for logs
	Line  int    // the rule's line in Config.Source
	Match Match
	// Policy and Mask are never empty: PolicyAuto and MaskCPU by default.
	Policy Policy
	Mask   MaskMode
	// CPUs is the pinned set, non-empty exactly for PolicyPinned.
	CPUs cpumask.Mask
	// Node replaces the device's numa_node; -1: online CPUs in id order.
	Node *int
	// Balance, XPS and NAPIThreads, when not "", override Config's.
	Balance     Balance
	XPS         XPSMode
	NAPIThreads NAPIThreadsMode
	// QueueRegex finds the queue index in an IRQ name by its group
	// "queue", matched anywhere; nil leaves it to the planner.
	QueueRegex *regexp.Regexp
}

// Match selects devices whose every set field matches. Parse anchors
// each regexp as ^(?:re)$, so "eth1" does not match eth10. A match with
// IRQNumbers selects single IRQs, not devices: those of its numbers
// whose name and device match the rest.
type Match struct {
	PCI        *regexp.Regexp
	Driver     *regexp.Regexp
	Interface  *regexp.Regexp
	IRQ        *regexp.Regexp
	IRQNumbers IRQSet
}

// DeviceFacts is what a rule can match on for one device.
type DeviceFacts struct {
	PCI string // "0000:03:00.0"; "" for a non-PCI device
	// Drivers, Interfaces and IRQNames (/proc/interrupts actions) name it.
	Drivers    []string
	Interfaces []string
	IRQNames   []string
	IRQs       []int // the IRQ numbers
}

// matches reports whether d satisfies every set field of m.
func (m Match) matches(d DeviceFacts) bool {
	return (m.PCI == nil || m.PCI.MatchString(d.PCI)) &&
		anyMatch(m.Driver, d.Drivers) &&
		anyMatch(m.Interface, d.Interfaces) &&
		anyMatch(m.IRQ, d.IRQNames) &&
		(m.IRQNumbers == nil || slices.ContainsFunc(d.IRQs, m.IRQNumbers.Contains))
}

// MatchesAny reports whether m matches any of ds.
func (m Match) MatchesAny(ds []DeviceFacts) bool { return slices.ContainsFunc(ds, m.matches) }

// String lists m's keys as written, as `interface "eht0"`.
func (m Match) String() string {
	var parts []string
	for i, re := range []*regexp.Regexp{m.PCI, m.Driver, m.Interface, m.IRQ} {
		if re != nil {
			parts = append(parts, fmt.Sprintf("%s %q", matchKeys[i], written(re)))
		}
	}
	if m.IRQNumbers != nil {
		parts = append(parts, "irq_numbers "+m.IRQNumbers.String())
	}
	return strings.Join(parts, ", ")
}

// Nearest is "; did you mean NAME?" when m's interface or driver is a
// plain name, none of ifaces or drivers but close to one, else "".
func (m Match) Nearest(ifaces, drivers []string) string {
	for _, c := range []struct {
		re    *regexp.Regexp
		names []string
	}{{m.Interface, ifaces}, {m.Driver, drivers}} {
		if s := written(c.re); c.re != nil && regexp.QuoteMeta(s) == s && !slices.Contains(c.names, s) {
			if hint := didYouMean(s, c.names); hint != "" {
				return hint
			}
		}
	}
	return ""
}

// written is a match regexp as the file has it, without Parse's anchors.
func written(re *regexp.Regexp) string {
	if re == nil {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(re.String(), "^(?:"), ")$")
}

func anyMatch(re *regexp.Regexp, ss []string) bool {
	return re == nil || slices.ContainsFunc(ss, re.MatchString)
}

// RuleFor returns the first device rule (no irq_numbers) of c.Devices
// matching d (do not modify).
func (c *Config) RuleFor(d DeviceFacts) (*Rule, bool) {
	for i := range c.Devices {
		if r := &c.Devices[i]; r.Match.IRQNumbers == nil && r.Match.matches(d) {
			return r, true
		}
	}
	return nil, false
}

// IRQRule returns the rule placing IRQ number (named name) of device d
// on its own: the first rule of c.Devices matching the IRQ, if it
// matches by irq_numbers; a device rule matching d before it wins. The
// numbers are looked at first: no regexp runs for an IRQ none names.
func (c *Config) IRQRule(d DeviceFacts, number int, name string) (*Rule, bool) {
	one := d
	one.IRQNames, one.IRQs = []string{name}, []int{number}
	for i := range c.Devices {
		r := &c.Devices[i]
		if !r.Match.IRQNumbers.Contains(number) || !r.Match.matches(one) {
			continue
		}
		for j := range i {
			if e := &c.Devices[j]; e.Match.IRQNumbers == nil && e.Match.matches(d) {
				return nil, false
			}
		}
		return r, true
	}
	return nil, false
}

// maxRules bounds the rules, which aliases could multiply a millionfold.
const maxRules = 5000

var (
	ruleKeys  = []string{"name", "match", "policy", "mask", "balance", "xps", "napi_threads", "cpus", "node", "queue_regex"}
	matchKeys = []string{"pci", "driver", "interface", "irq", "irq_numbers"}
	// byNumberKeys are the rule keys that place devices, not single IRQs.
	byNumberKeys = []string{"mask", "balance", "xps", "napi_threads", "node", "queue_regex"}
)

// devices reads the list of rules.
func (p *parser) devices(n *yaml.Node, path string) []Rule {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil // "devices:" with every rule commented out
	}
	if n.Kind != yaml.SequenceNode {
		p.wrongType(n, path, "a list of rules")
		return nil
	}
	if len(n.Content) > maxRules {
		p.errorf(n, path, nil, "%d rules is more than the limit of %d (want at most %d rules)", len(n.Content), maxRules, maxRules)
		return nil
	}
	rules := make([]Rule, 0, len(n.Content))
	for i, item := range n.Content {
		item := resolve(item)
		rules = append(rules, once(p, item, "rule", func() Rule { return p.rule(item, fmt.Sprintf("%s[%d]", path, i)) }))
	}
	return rules
}

// rule reads one rule; a rule with no policy gets PolicyAuto.
func (p *parser) rule(n *yaml.Node, path string) Rule {
	r := Rule{Line: n.Line, Policy: PolicyAuto, Mask: MaskCPU}
	if n.Kind != yaml.MappingNode {
		p.wrongType(n, path, "a rule: a mapping with match and policy")
		return r
	}
	var (
		policyNode, cpusKey *yaml.Node
		policyOK, cpusOK    = true, true
	)
	seen := p.mapping(n, path, ruleKeys, func(key string, k, v *yaml.Node, path string) {
		switch key { // each through once: rules may share values by alias
		case "name":
			r.Name = once(p, v, key, func() string { s, _ := p.str(v, path, "a string"); return s })
		case "match":
			r.Match = once(p, v, key, func() Match { return p.match(v, path) })
		case "policy":
			policyNode = v
			c := once(p, v, key, func() checked[Policy] { return check(oneOf(p, v, path, "policy", policies)) })
			r.Policy, policyOK = c.v, c.ok
		case "mask":
			r.Mask = once(p, v, key, func() MaskMode { m, _ := oneOf(p, v, path, "mask mode", maskModes); return m })
		case "balance":
			r.Balance = once(p, v, key, func() Balance { b, _ := oneOf(p, v, path, "balance", balances); return b })
		case "xps":
			r.XPS = once(p, v, key, func() XPSMode { m, _ := oneOf(p, v, path, "xps mode", xpsModes); return m })
		case "napi_threads":
			r.NAPIThreads = once(p, v, key, func() NAPIThreadsMode {
				m, _ := oneOf(p, v, path, "napi_threads mode", napiThreadsModes)
				return m
			})
		case "cpus":
			cpusKey = k
			c := once(p, v, key, func() checked[cpumask.Mask] {
				m, ok := p.cpuList(v, path)
				if ok && m.IsEmpty() {
					p.errorf(v, path, nil, "empty CPU list (want at least one CPU, as %s)", wantCPUList)
					ok = false
				}
				return check(m, ok)
			})
			r.CPUs, cpusOK = c.v, c.ok
		case "node":
			r.Node = once(p, v, key, func() *int {
				if i, ok := p.integer(v, path, -1, math.MaxInt, "an integer >= -1, -1 for no node"); ok {
					return &i
				}
				return nil
			})
		case "queue_regex":
			r.QueueRegex = once(p, v, key, func() *regexp.Regexp { return p.queueRegex(v, path) })
		}
	})
	if seen["match"] == nil {
		p.errorf(n, path+".match", nil, "missing (want a mapping with at least one of %s)", strings.Join(matchKeys, ", "))
	}
	if r.Match.IRQNumbers != nil {
		p.byNumber(n, path, r, seen, policyNode, policyOK)
	}
	switch {
	case !policyOK || !cpusOK:
	case r.Policy == PolicyPinned && cpusKey == nil:
		p.errorf(policyNode, path+".cpus", nil, "missing for policy pinned (want %s)", wantCPUList)
	case r.Policy != PolicyPinned && cpusKey != nil:
		p.errorf(cpusKey, path+".cpus", nil, "not allowed with policy %s (want policy pinned, or no cpus)", r.Policy)
	}
	return r
}

// match reads a rule's match, whose regexps match whole strings.
func (p *parser) match(n *yaml.Node, path string) Match {
	var m Match
	want := "a mapping with at least one of " + strings.Join(matchKeys, ", ")
	if n.Kind != yaml.MappingNode {
		p.wrongType(n, path, want)
		return m
	}
	fields := map[string]**regexp.Regexp{"pci": &m.PCI, "driver": &m.Driver, "interface": &m.Interface, "irq": &m.IRQ}
	seen := p.mapping(n, path, matchKeys, func(key string, k, v *yaml.Node, path string) {
		if key == "irq_numbers" {
			m.IRQNumbers = once(p, v, key, func() IRQSet { return p.irqNumbers(v, path) })
			return
		}
		*fields[key] = once(p, v, "match regexp", func() *regexp.Regexp {
			return p.compileRegexp(v, path, "a regexp string", "a Go regexp", true)
		})
	})
	if len(seen) == 0 && len(n.Content) == 0 {
		p.errorf(n, path, nil, "no keys (want %s)", want)
	}
	return m
}

// byNumber checks a rule matching irq_numbers: it pins or ignores
// single IRQs, so it has policy pinned or ignore and no device keys.
func (p *parser) byNumber(n *yaml.Node, path string, r Rule, seen map[string]*yaml.Node, policyNode *yaml.Node, policyOK bool) {
	const want = "ignore or pinned: a rule by irq_numbers leaves single IRQs alone or pins them"
	switch {
	case policyNode == nil:
		p.errorf(n, path+".policy", nil, "missing for match.irq_numbers (want %s)", want)
	case policyOK && r.Policy != PolicyIgnore && r.Policy != PolicyPinned:
		p.errorf(policyNode, path+".policy", nil, "%s is not for match.irq_numbers (want %s)", r.Policy, want)
	}
	for _, key := range byNumberKeys {
		if k := seen[key]; k != nil {
			p.errorf(k, path+"."+key, nil, "not allowed with match.irq_numbers (want it in a rule matching devices)")
		}
	}
}

// queueRegex reads queue_regex, which must name a group "queue".
func (p *parser) queueRegex(n *yaml.Node, path string) *regexp.Regexp {
	const want = `a Go regexp with a group named "queue", such as "-(?P<queue>[0-9]+)$"`
	re := p.compileRegexp(n, path, want, want, false)
	if re != nil && re.SubexpIndex("queue") < 0 {
		p.errorf(n, path, nil, "regexp %q has no group named \"queue\" (want %s)", n.Value, want)
		return nil
	}
	return re
}

// maxRegexpSize bounds the config's regexps in compiled instructions,
// each costing regexpCost more: a{1,1000} expands 8 bytes into 1000.
const (
	maxRegexpSize = 200_000
	regexpCost    = 20
)

// compileRegexp compiles the string at n, as ^(?:s)$ when anchor is set,
// charging its parsed size to maxRegexpSize before expanding it.
func (p *parser) compileRegexp(n *yaml.Node, path, typeWant, want string, anchor bool) *regexp.Regexp {
	s, ok := p.str(n, path, typeWant)
	if !ok {
		return nil
	}
	parsed, err := syntax.Parse(s, syntax.Perl)
	if err != nil {
		p.errorf(n, path, err, "invalid regexp %q: %v (want %s)", s, err, want)
		return nil
	}
	size := regexpCost + progSize(parsed)
	if p.regexpSize+size > maxRegexpSize {
		p.errorf(n, path, nil, "regexp %q is too large: with the regexps before it, it compiles to more than %d instructions (want fewer or simpler regexps, such as smaller {n,m} repeats)", s, maxRegexpSize)
		return nil
	}
	p.regexpSize += size
	expr := s
	if anchor {
		expr = "^(?:" + s + ")$"
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		p.errorf(n, path, err, "invalid regexp %q: %v (want %s)", s, err, want)
		return nil
	}
	return re
}

// progSize bounds the instructions re compiles to, saturating at 1<<30.
func progSize(re *syntax.Regexp) int {
	const limit = 1 << 30
	n := 1
	switch re.Op {
	case syntax.OpLiteral:
		n = len(re.Rune) // one instruction a rune
	case syntax.OpRepeat:
		// x{n,m} is m copies, x{n,} n copies and a star.
		times := max(re.Max, re.Min+1, 1)
		sub := progSize(re.Sub[0]) + 1
		if sub > limit/times {
			return limit
		}
		n = sub * times
	default:
		for _, sub := range re.Sub {
			n += progSize(sub)
		}
	}
	return min(n, limit)
}
