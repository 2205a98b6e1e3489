package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// ErrInvalid is matched (errors.Is) by every error Parse returns for a
// file it could read but not accept.
var ErrInvalid = errors.New("invalid config")

// Error is one problem in a config file. Parse joins all of them with
// errors.Join; pick them out with errors.As or by splitting lines.
type Error struct {
	File string
	Line int    // 1-based; 0 when the YAML parser gave none
	Path string // key path such as "devices[1].policy", "" for the whole document
	Msg  string // what was wrong, then "(want ...)"
	Err  error  // underlying cause, such as a cpumask parse error (kernfs.ErrMalformed), or nil
}

// Error formats e as "<file>:<line>: <key path>: <message>".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes every Error match ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// MaxSize is the largest config file Load accepts, in bytes. A config of
// a few rules is a few KiB; the limit keeps a wrong path (a log file, a
// disk image) from being read into memory whole.
const MaxSize = 1 << 20

// Load reads and parses the file at path. Read errors name the path and
// wrap the os error (errors.Is(err, fs.ErrNotExist) works). The path
// must be a regular file once symlinks are followed, at most MaxSize
// bytes: a FIFO, device, socket or directory is an error and is never
// read, so a wrong path can neither block nor exhaust memory.
func Load(path string) (*Config, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// readFile reads at most MaxSize bytes of the regular file at path. It
// checks the type twice: with stat before opening, so a FIFO or device
// is never opened, and with fstat on the opened descriptor, in case the
// path was replaced in between. O_NONBLOCK keeps that open from blocking
// on a FIFO swapped in; O_NOCTTY keeps a terminal swapped in from
// becoming the daemon's controlling terminal. The read goes through a
// LimitReader, so a file that grows after the fstat is still bounded.
func readFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	if fi.Size() > MaxSize {
		return nil, tooLarge(path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if len(data) > MaxSize {
		return nil, tooLarge(path)
	}
	return data, nil
}

func tooLarge(path string) error {
	return fmt.Errorf("read config: %s: larger than the limit of %d bytes (want a file of at most 1 MiB)", path, MaxSize)
}

// regular returns an error naming path and its type unless fi is a
// regular file.
func regular(path string, fi fs.FileInfo) error {
	var what string
	switch m := fi.Mode(); {
	case m.IsRegular():
		return nil
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	default:
		what = "a file of type " + m.Type().String()
	}
	return fmt.Errorf("read config: %s: is %s, not a regular file (want a regular file, or a symlink to one)", path, what)
}

// DefaultPath is where numairqd reads its config when none is named.
const DefaultPath = "/etc/numairqd/numairqd.yaml"

// LoadOrDefault is Load, except that a missing file gives Default (with
// an empty Source): for a default path, which need not exist. A file
// that exists must parse.
func LoadOrDefault(path string) (*Config, error) {
	c, err := Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	return c, err
}

// Parse decodes one YAML document; name is the file name used in Source
// and in error messages. An empty document gives Default. Any problem
// (YAML syntax, more than one document, unknown or duplicate key, wrong
// type, bad value) makes Parse return a nil Config and every problem it
// found, each an *Error, joined with errors.Join and sorted by line.
//
// Whatever data holds, Parse takes time and memory linear in its size
// and returns at most MaxErrors errors of bounded length: data over
// MaxSize is refused; a node that several aliases share is checked once,
// and its errors reported once, at the anchor's line and under the key
// path of its first use; a message or key path quoting a long value is
// shortened in the middle; past MaxErrors, a last *Error with line 0,
// "... and N more errors", counts the rest.
func Parse(name string, data []byte) (*Config, error) {
	if name == "" {
		name = "config"
	}
	p := &parser{file: name, memo: make(map[memoKey]any)}
	c := Default()
	c.Source = name
	if len(data) > MaxSize {
		p.errorf(nil, "", nil, "%d bytes is larger than the limit of %d bytes (want a file of at most 1 MiB)", len(data), MaxSize)
	} else if root := p.decode(data); root != nil {
		p.config(root, c)
	}
	if len(p.errs) > 0 {
		errs := make([]error, len(p.errs), len(p.errs)+1)
		for i, e := range p.errs {
			errs[i] = e
		}
		if p.dropped > 0 {
			errs = append(errs, &Error{File: name, Msg: fmt.Sprintf("... and %d more errors", p.dropped)})
		}
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// Keys in the order the example file lists them, for "want one of".
var (
	topKeys   = []string{"banned_cpus", "exclude_isolated", "exclude_nohz_full", "devices", "listen", "resync_interval", "restore_on_exit", "coalesce_window", "coalesce_max_delay", "metrics_per_irq", "balance", "load_balance", "irqbalance_env_file", "honor_default_smp_affinity"}
	ruleKeys  = []string{"name", "match", "policy", "mask", "balance", "cpus", "node", "queue_regex"}
	loadKeys  = []string{"interval", "half_life", "min_gain", "min_drop", "min_peak", "samples", "moves_per_minute"}
	matchKeys = []string{"pci", "driver", "interface", "irq"}
)

const (
	wantCPUList  = `a CPU list like "0-3,8"`
	wantDuration = `a Go duration like "60s" or "100ms"`
	wantListen   = `host:port such as "127.0.0.1:9768", or "" to disable`
	wantEnvFile  = `an absolute path, "auto" (the first of /etc/sysconfig/irqbalance, /etc/default/irqbalance that exists) or "" for none`
)

// MaxErrors is the most errors Parse reports one by one; it counts the
// rest in a last line. The first few problems of a broken file are what
// its author needs; thousands of lines only flood the log.
const MaxErrors = 20

// Bounds, in bytes, on an Error's Path and Msg, so that MaxErrors lines
// stay within a few KiB even when they quote a long key or value. Every
// message the parser writes for a value of normal length fits.
const (
	maxPath = 64
	maxMsg  = 256
)

// parser walks the yaml.Node tree by hand, rather than through
// yaml.Decoder.KnownFields, so that every value error has a line and all
// errors are collected in one pass.
type parser struct {
	file string
	// errs are the first MaxErrors errors by line, in the order found
	// among equal lines; dropped counts the others.
	errs    []*Error
	dropped int
	memo    map[memoKey]any
	// regexpSize is the size of the regexps compiled so far, for
	// MaxRegexpSize.
	regexpSize int
}

func (p *parser) errorf(n *yaml.Node, path string, cause error, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	if p.full(line) {
		p.dropped++ // and skip formatting a message nobody will read
		return
	}
	p.add(&Error{File: p.file, Line: line, Path: clip(path, maxPath), Msg: clip(fmt.Sprintf(format, args...), maxMsg), Err: cause})
}

// full reports whether an error at line would not be among the first
// MaxErrors.
func (p *parser) full(line int) bool {
	return len(p.errs) == MaxErrors && p.errs[MaxErrors-1].Line <= line
}

// add inserts e after the kept errors at its line or before, dropping the
// last one when more than MaxErrors are kept.
func (p *parser) add(e *Error) {
	if p.full(e.Line) {
		p.dropped++
		return
	}
	i, _ := slices.BinarySearchFunc(p.errs, e.Line+1, func(k *Error, line int) int { return cmp.Compare(k.Line, line) })
	p.errs = slices.Insert(p.errs, i, e)
	if len(p.errs) > MaxErrors {
		p.errs = p.errs[:MaxErrors]
		p.dropped++
	}
}

// clip shortens s to at most max bytes by cutting out its middle, so a
// message keeps both what was wrong and its "(want ...)" ending.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const cut = " ... "
	head := (max - len(cut)) / 2
	tail := len(s) - (max - len(cut) - head)
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + cut + s[tail:]
}

// memoKey is a node and the setting it is read as.
type memoKey struct {
	n    *yaml.Node
	slot string
}

// once returns f's result for node n read as slot, calling f only the
// first time, so that a node shared by aliases is checked, and its errors
// reported, once.
//
// Decoding into a yaml.Node does not expand aliases: an alias stays a
// pointer to its anchor's node, so the tree is a DAG, and yaml.v3's
// alias-ratio limit, which only applies when decoding into Go values,
// never runs. A walk that followed every alias would do work, and report
// errors, once per path through that DAG: a 15 KB file listing one
// alias 3000 times to a rule with 300 bad keys gave 900,000 errors.
// Keying on the node's identity (what the anchor names), not the alias,
// makes the walk linear in the file. The slot is part of the key because
// one scalar may be read as different settings, each with its own
// checks. Rejecting aliases outright would be as bounded, but would
// refuse configs that use them validly today.
func once[T any](p *parser, n *yaml.Node, slot string, f func() T) T {
	k := memoKey{n, slot}
	if v, ok := p.memo[k]; ok {
		return v.(T)
	}
	v := f()
	p.memo[k] = v
	return v
}

// checked is a value and whether it was valid, for once.
type checked[T any] struct {
	v  T
	ok bool
}

func check[T any](v T, ok bool) checked[T] { return checked[T]{v, ok} }

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// decode returns the single document's root node, nil for an empty file
// or on error.
func (p *parser) decode(data []byte) (root *yaml.Node) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, extra yaml.Node
	if err := p.decodeNode(dec, &doc); err != nil {
		if !errors.Is(err, io.EOF) {
			p.syntax(err)
		}
		return nil
	}
	switch err := p.decodeNode(dec, &extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		p.syntax(err)
		return nil
	default:
		p.errorf(&extra, "", nil, "a second YAML document (want exactly one document)")
		return nil
	}
	if len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
}

// decodeNode turns a panic in the YAML library into an error: a reload
// must not crash the daemon whatever the file holds.
func (p *parser) decodeNode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	return dec.Decode(n)
}

func (p *parser) syntax(err error) {
	e := &Error{File: p.file, Msg: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: "), Err: err}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = "invalid YAML: " + m[2]
	}
	e.Msg = clip(e.Msg, maxMsg)
	p.add(e)
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// describe says what n is, for "got ..." messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		switch n.ShortTag() {
		case "!!null":
			return "no value"
		case "!!str":
			return fmt.Sprintf("string %q", v)
		case "!!int":
			return "integer " + v
		case "!!float":
			return "number " + v
		case "!!bool":
			return "boolean " + v
		default:
			return fmt.Sprintf("%s %q", n.ShortTag(), v)
		}
	}
	return "an unresolved alias"
}

func (p *parser) wrongType(n *yaml.Node, path, want string) {
	p.errorf(n, path, nil, "got %s (want %s)", describe(n), want)
}

// mapping calls set for each key of mapping n that is in keys, after
// reporting unknown, duplicate and non-string keys. It returns the key
// nodes of the known keys it saw. n must be resolved.
func (p *parser) mapping(n *yaml.Node, path string, keys []string, set func(key string, k, v *yaml.Node, path string)) map[string]*yaml.Node {
	seen := make(map[string]*yaml.Node)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			p.errorf(k, path+".<<", nil, "merge keys are not supported (want the keys written out, or an alias for the whole value)")
			continue
		}
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			p.errorf(k, path, nil, "key is %s (want one of %s)", describe(k), strings.Join(keys, ", "))
			continue
		}
		kpath := clip(k.Value, maxPath)
		if path != "" {
			kpath = path + "." + kpath
		}
		if !slices.Contains(keys, k.Value) {
			p.errorf(k, kpath, nil, "unknown key (want one of %s)", strings.Join(keys, ", "))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			p.errorf(k, kpath, nil, "duplicate key, first at line %d (want each key once)", first.Line)
			continue
		}
		seen[k.Value] = k
		set(k.Value, k, v, kpath)
	}
	return seen
}

func (p *parser) scalar(n *yaml.Node, path, tag, want string) bool {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != tag {
		p.wrongType(n, path, want)
		return false
	}
	return true
}

func (p *parser) str(n *yaml.Node, path, want string) (string, bool) {
	if !p.scalar(n, path, "!!str", want) {
		return "", false
	}
	return n.Value, true
}

func (p *parser) boolean(n *yaml.Node, path string) (bool, bool) {
	if !p.scalar(n, path, "!!bool", "true or false") {
		return false, false
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		p.errorf(n, path, err, "invalid boolean %q (want true or false)", n.Value)
		return false, false
	}
	return b, true
}

// duration parses a Go duration string that is more than 0, at least
// lo and, unless hi is 0, at most hi.
func (p *parser) duration(n *yaml.Node, path string, lo, hi time.Duration) (time.Duration, bool) {
	s, ok := p.str(n, path, wantDuration)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		p.errorf(n, path, err, "%s (want %s)", strings.TrimPrefix(err.Error(), "time: "), wantDuration)
		return 0, false
	}
	switch {
	case lo > 0 && d < lo:
		p.errorf(n, path, nil, "%s is too short (want at least %s)", d, lo)
	case d <= 0 && hi > 0:
		p.errorf(n, path, nil, "%s is out of range (want more than 0 and at most %s)", d, hi)
	case d <= 0:
		p.errorf(n, path, nil, "%s is out of range (want more than 0)", d)
	case hi > 0 && d > hi:
		p.errorf(n, path, nil, "%s is out of range (want more than 0 and at most %s)", d, hi)
	default:
		return d, true
	}
	return 0, false
}

// cpuList parses a kernel list string, or an integer as a single CPU.
func (p *parser) cpuList(n *yaml.Node, path string) (cpumask.Mask, bool) {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!str" && n.ShortTag() != "!!int") {
		p.wrongType(n, path, wantCPUList)
		return cpumask.Mask{}, false
	}
	m, err := cpumask.ParseList(n.Value)
	if err != nil {
		p.errorf(n, path, err, "%v", err)
		return cpumask.Mask{}, false
	}
	return m, true
}

// anchored compiles the user's re to match whole strings only.
func (p *parser) anchored(n *yaml.Node, path string) (*regexp.Regexp, bool) {
	const want = "a Go regexp"
	s, ok := p.str(n, path, "a regexp string")
	if !ok || !p.regexpFits(n, path, s, want) {
		return nil, false
	}
	re, err := regexp.Compile("^(?:" + s + ")$")
	if err != nil {
		p.errorf(n, path, err, "invalid regexp %q: %v (want %s)", s, err, want)
		return nil, false
	}
	return re, true
}

// MaxRegexpSize bounds the total size of the config's regexps, in
// compiled instructions. Go's regexps run in linear time, but compiling
// one costs time and memory in proportion to its expanded size, and a
// repeat such as a{1,1000} expands 8 bytes into 1000 instructions: a
// 1 MiB file of such rules took 90 s and 50 GB of allocations to parse.
// Each regexp also counts regexpCost for its fixed cost. A rule's regexp
// is typically 10 to 50 instructions; a config of a hundred rules uses a
// few percent of the limit.
const MaxRegexpSize = 200_000

const regexpCost = 20

// regexpFits reports whether s is a valid regexp that fits in what is
// left of MaxRegexpSize, and takes its size from that. It reports an
// error otherwise. It parses s without compiling it, so an oversized
// regexp is never expanded.
func (p *parser) regexpFits(n *yaml.Node, path, s, want string) bool {
	re, err := syntax.Parse(s, syntax.Perl)
	if err != nil {
		p.errorf(n, path, err, "invalid regexp %q: %v (want %s)", s, err, want)
		return false
	}
	size := regexpCost + progSize(re)
	if p.regexpSize+size > MaxRegexpSize {
		p.errorf(n, path, nil, "regexp %q is too large: with the regexps before it, it compiles to more than %d instructions (want fewer or simpler regexps, such as smaller {n,m} repeats)", s, MaxRegexpSize)
		return false
	}
	p.regexpSize += size
	return true
}

// progSize estimates, from above, the number of instructions re compiles
// to, saturating at 1<<30. Its cost is linear in the size of the parsed
// tree, which syntax.Parse keeps compact (a repeat is one node).
func progSize(re *syntax.Regexp) int {
	const limit = 1 << 30
	n := 1
	switch re.Op {
	case syntax.OpLiteral:
		n = len(re.Rune) // one instruction a rune
	case syntax.OpRepeat:
		// x{n,m} is m copies, each optional one behind a split;
		// x{n,} is n copies and a star.
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

func (p *parser) config(root *yaml.Node, c *Config) {
	root = resolve(root)
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return // "---" alone: defaults
	}
	if root.Kind != yaml.MappingNode {
		p.wrongType(root, "", "a mapping of settings")
		return
	}
	var windowOK, maxDelayOK bool
	var windowNode, maxDelayNode *yaml.Node
	p.mapping(root, "", topKeys, func(key string, k, v *yaml.Node, path string) {
		var ok bool
		switch key {
		case "banned_cpus":
			c.BannedCPUs, _ = p.cpuList(v, path)
		case "exclude_isolated":
			c.ExcludeIsolated, _ = p.boolean(v, path)
		case "exclude_nohz_full":
			c.ExcludeNohzFull, _ = p.boolean(v, path)
		case "devices":
			c.Devices = p.devices(v, path)
		case "listen":
			if c.Listen, ok = p.str(v, path, wantListen); ok {
				p.listen(v, path, c.Listen)
			}
		case "resync_interval":
			c.ResyncInterval, _ = p.duration(v, path, MinResyncInterval, 0)
		case "restore_on_exit":
			c.RestoreOnExit, _ = p.boolean(v, path)
		case "coalesce_window":
			windowNode = v
			c.CoalesceWindow, windowOK = p.duration(v, path, 0, MaxCoalesceWindow)
		case "coalesce_max_delay":
			maxDelayNode = v
			c.CoalesceMaxDelay, maxDelayOK = p.duration(v, path, 0, 0)
		case "metrics_per_irq":
			c.MetricsPerIRQ, _ = p.boolean(v, path)
		case "balance":
			if b, ok := oneOf(p, v, path, "balance", balances); ok {
				c.Balance = b
			}
		case "load_balance":
			p.loadBalance(v, path, &c.LoadBalance)
		case "irqbalance_env_file":
			if f, ok := p.str(v, path, wantEnvFile); ok {
				if f != "" && f != "auto" && !filepath.IsAbs(f) {
					p.errorf(v, path, nil, "%q is not an absolute path (want %s)", f, wantEnvFile)
				} else {
					c.IrqbalanceEnvFile = f
				}
			}
		case "honor_default_smp_affinity":
			switch {
			case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" && v.Value == "auto":
				c.HonorDefaultAffinity = nil
			case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool":
				if b, ok := p.boolean(v, path); ok {
					c.HonorDefaultAffinity = &b
				}
			default:
				p.wrongType(v, path, "true, false or auto")
			}
		}
	})
	if (windowNode == nil || windowOK) && (maxDelayNode == nil || maxDelayOK) && c.CoalesceMaxDelay < c.CoalesceWindow {
		at := cmp.Or(maxDelayNode, windowNode)
		p.errorf(at, "coalesce_max_delay", nil, "%s is shorter than coalesce_window %s (want coalesce_max_delay >= coalesce_window)",
			c.CoalesceMaxDelay, c.CoalesceWindow)
	}
}

func (p *parser) listen(n *yaml.Node, path, addr string) {
	if err := CheckListen(addr); err != nil {
		p.errorf(n, path, errors.Unwrap(err), "%s", err)
	}
}

// CheckListen validates a metrics/HTTP address as the config's listen
// key and the --listen flag take it: host:port with a numeric port, or
// "" for none. The error says what is wrong and what is wanted.
func CheckListen(addr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		why := err.Error()
		if ae, ok := err.(*net.AddrError); ok {
			why = ae.Err
		}
		return &listenError{fmt.Sprintf("invalid address %q: %s (want %s)", addr, why, wantListen), err}
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return &listenError{fmt.Sprintf("invalid address %q: port %q is not a number from 0 to 65535 (want %s)", addr, port, wantListen), err}
	}
	return nil
}

// listenError is CheckListen's error: its message, and the net or
// strconv error beneath it.
type listenError struct {
	msg string
	err error
}

func (e *listenError) Error() string { return e.msg }
func (e *listenError) Unwrap() error { return e.err }

// MaxRules bounds the number of device rules. A machine has a few dozen
// devices, and the planner tries every rule on every device; the bound
// also keeps aliases from multiplying a rule into hundreds of thousands
// of copies.
const MaxRules = 5000

func (p *parser) devices(n *yaml.Node, path string) []Rule {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil // "devices:" with every rule commented out
	}
	if n.Kind != yaml.SequenceNode {
		p.wrongType(n, path, "a list of rules")
		return nil
	}
	if len(n.Content) > MaxRules {
		p.errorf(n, path, nil, "%d rules is more than the limit of %d (want at most %d rules)", len(n.Content), MaxRules, MaxRules)
		return nil
	}
	rules := make([]Rule, 0, len(n.Content))
	for i, item := range n.Content {
		item := resolve(item)
		rules = append(rules, once(p, item, "rule", func() Rule { return p.rule(item, fmt.Sprintf("%s[%d]", path, i)) }))
	}
	return rules
}

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
		// Each value through once: distinct rules may share it by alias.
		switch key {
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
			r.Node = once(p, v, key, func() *int { return p.node(v, path) })
		case "queue_regex":
			r.QueueRegex = once(p, v, key, func() *regexp.Regexp { return p.queueRegex(v, path) })
		}
	})
	if seen["match"] == nil {
		p.errorf(n, path+".match", nil, "missing (want a mapping with at least one of %s)", strings.Join(matchKeys, ", "))
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

func oneOf[T ~string](p *parser, n *yaml.Node, path, what string, valid []T) (T, bool) {
	names := make([]string, len(valid))
	for i, v := range valid {
		names[i] = string(v)
	}
	want := "one of " + strings.Join(names, ", ")
	s, ok := p.str(n, path, want)
	if !ok {
		return valid[0], false
	}
	if !slices.Contains(names, s) {
		p.errorf(n, path, nil, "unknown %s %q (want %s)", what, s, want)
		return valid[0], false
	}
	return T(s), true
}

func (p *parser) match(n *yaml.Node, path string) Match {
	var m Match
	want := "a mapping with at least one of " + strings.Join(matchKeys, ", ")
	if n.Kind != yaml.MappingNode {
		p.wrongType(n, path, want)
		return m
	}
	seen := p.mapping(n, path, matchKeys, func(key string, k, v *yaml.Node, path string) {
		// Through once: distinct matches may share a regexp by alias.
		re := once(p, v, "match regexp", func() *regexp.Regexp { re, _ := p.anchored(v, path); return re })
		switch key {
		case "pci":
			m.PCI = re
		case "driver":
			m.Driver = re
		case "interface":
			m.Interface = re
		case "irq":
			m.IRQ = re
		}
	})
	if len(seen) == 0 && len(n.Content) == 0 {
		p.errorf(n, path, nil, "no keys (want %s)", want)
	}
	return m
}

// Bounds of load_balance. The interval's floor keeps sampling (a read
// of /proc/interrupts, 23 MB at 256 CPUs) well under a tenth of a CPU;
// its ceiling and half_life's keep the loads about the current hour.
const (
	MinLoadInterval = time.Second
	MaxLoadInterval = 10 * time.Minute
	MaxLoadHalfLife = time.Hour
	MaxLoadSamples  = 1000
	// MinLoadMinDrop is min_drop's floor, half a percent of a CPU: the
	// planner never moves for less.
	MinLoadMinDrop    = 0.005
	MaxMovesPerMinute = 10000
)

// loadBalance parses the load_balance mapping over the defaults in lb.
func (p *parser) loadBalance(n *yaml.Node, path string, lb *LoadBalance) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return // "load_balance:" with every key commented out
	}
	if n.Kind != yaml.MappingNode {
		p.wrongType(n, path, "a mapping of "+strings.Join(loadKeys, ", "))
		return
	}
	p.mapping(n, path, loadKeys, func(key string, k, v *yaml.Node, path string) {
		switch key {
		case "interval":
			if d, ok := p.duration(v, path, MinLoadInterval, MaxLoadInterval); ok {
				lb.Interval = d
			}
		case "half_life":
			if d, ok := p.duration(v, path, MinLoadInterval, MaxLoadHalfLife); ok {
				lb.HalfLife = d
			}
		case "min_gain":
			if f, ok := p.fraction(v, path); ok {
				lb.MinGain = f
			}
		case "min_drop":
			if f, ok := p.fraction(v, path); ok {
				if f < MinLoadMinDrop {
					p.errorf(v, path, nil, "%s is below %g (half a percent of a CPU, the least the planner moves for)", v.Value, MinLoadMinDrop)
					break
				}
				lb.MinDrop = f
			}
		case "min_peak":
			if f, ok := p.fraction(v, path); ok {
				lb.MinPeak = f
			}
		case "samples":
			if i, ok := p.integer(v, path, 1, MaxLoadSamples); ok {
				lb.Samples = i
			}
		case "moves_per_minute":
			if i, ok := p.integer(v, path, 1, MaxMovesPerMinute); ok {
				lb.MovesPerMinute = i
			}
		}
	})
}

// fraction parses a number from 0 up to but not including 1.
func (p *parser) fraction(n *yaml.Node, path string) (float64, bool) {
	const want = "a number from 0 up to, not including, 1, such as 0.1"
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!float" && n.ShortTag() != "!!int") {
		p.wrongType(n, path, want)
		return 0, false
	}
	var f float64
	if err := n.Decode(&f); err != nil {
		p.errorf(n, path, err, "invalid number %q (want %s)", n.Value, want)
		return 0, false
	}
	if !(f >= 0 && f < 1) { // also refuses NaN
		p.errorf(n, path, nil, "%s is out of range (want %s)", n.Value, want)
		return 0, false
	}
	return f, true
}

// integer parses an integer from lo to hi.
func (p *parser) integer(n *yaml.Node, path string, lo, hi int) (int, bool) {
	want := fmt.Sprintf("an integer from %d to %d", lo, hi)
	if !p.scalar(n, path, "!!int", want) {
		return 0, false
	}
	var v int
	if err := n.Decode(&v); err != nil {
		p.errorf(n, path, err, "invalid integer %q (want %s)", n.Value, want)
		return 0, false
	}
	if v < lo || v > hi {
		p.errorf(n, path, nil, "%d is out of range (want %s)", v, want)
		return 0, false
	}
	return v, true
}

func (p *parser) node(n *yaml.Node, path string) *int {
	const want = "an integer >= -1, -1 for no node"
	if !p.scalar(n, path, "!!int", want) {
		return nil
	}
	var v int
	if err := n.Decode(&v); err != nil {
		p.errorf(n, path, err, "invalid integer %q (want %s)", n.Value, want)
		return nil
	}
	if v < -1 {
		p.errorf(n, path, nil, "%d is out of range (want %s)", v, want)
		return nil
	}
	return &v
}

func (p *parser) queueRegex(n *yaml.Node, path string) *regexp.Regexp {
	const want = `a Go regexp with a group named "queue", such as "-(?P<queue>[0-9]+)$"`
	s, ok := p.str(n, path, want)
	if !ok || !p.regexpFits(n, path, s, want) {
		return nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		p.errorf(n, path, err, "invalid regexp %q: %v (want %s)", s, err, want)
		return nil
	}
	if re.SubexpIndex("queue") < 0 {
		p.errorf(n, path, nil, "regexp %q has no group named \"queue\" (want %s)", s, want)
		return nil
	}
	return re
}
