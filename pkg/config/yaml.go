package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Error is one problem in a config file; Parse joins them. A read error
// holds none, so errors.As tells a bad file from an unreadable one.
type Error struct {
	File string
	Line int    // 1-based; 0 when the YAML parser gave none
	Path string // key path such as "devices[1].policy", "" for the whole document
	Msg  string // what was wrong, then "(want ...)"
	Err  error  // underlying cause, or nil
}

// Error formats e as "<file>:<line>: <key path>: <message>".
func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	if e.Path != "" {
		s += ": " + e.Path
	}
	return s + ": " + e.Msg
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// parser walks the yaml.Node tree, collecting every error with its line.
type parser struct {
	file       string
	errs       []*Error // the first maxErrors by line; dropped counts the rest
	dropped    int
	memo       map[memoKey]any
	regexpSize int // of the regexps compiled so far, for maxRegexpSize
}

// maxErrors is the most errors Parse reports one by one; maxPath and
// maxMsg bound an Error's Path and Msg in bytes.
const (
	maxErrors = 20
	maxPath   = 64
	maxMsg    = 256
)

func (p *parser) errorf(n *yaml.Node, path string, cause error, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	if len(p.errs) == maxErrors && p.errs[maxErrors-1].Line <= line {
		p.dropped++ // and skip formatting a message nobody will read
		return
	}
	p.add(&Error{File: p.file, Line: line, Path: clip(path, maxPath), Msg: clip(fmt.Sprintf(format, args...), maxMsg), Err: cause})
}

// add inserts e after the errors at or before its line, keeping maxErrors.
func (p *parser) add(e *Error) {
	i, _ := slices.BinarySearchFunc(p.errs, e.Line+1, func(k *Error, line int) int { return cmp.Compare(k.Line, line) })
	p.errs = slices.Insert(p.errs, i, e)
	if len(p.errs) > maxErrors {
		p.errs = p.errs[:maxErrors]
		p.dropped++
	}
}

// clip cuts the middle out of s to fit max bytes, at spaces when the
// halves have any (else between runes), so that no word is cut.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const cut = " ... "
	head := (max - len(cut)) / 2
	tail := len(s) - (max - len(cut) - head)
	if i := strings.LastIndexByte(s[:head+1], ' '); i > 0 {
		head = i
	}
	if i := strings.IndexByte(s[tail-1:], ' '); i >= 0 && tail+i < len(s) {
		tail += i
	}
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return strings.TrimRight(s[:head], " ") + cut + s[tail:]
}

// memoKey is a node and the setting (slot) it is read as.
type memoKey struct {
	n    *yaml.Node
	slot string
}

// once returns f's result for node n read as slot, calling f only the
// first time, so that a node shared by aliases is checked once.
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

// decode returns the single document's root node, nil if empty or bad.
func (p *parser) decode(data []byte) (root *yaml.Node) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc, extra yaml.Node
	if err := p.decodeNode(dec, &doc); err != nil {
		if !errors.Is(err, io.EOF) {
			p.syntax(err, data)
		}
		return nil
	}
	switch err := p.decodeNode(dec, &extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		p.syntax(err, data)
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

// decodeNode turns a panic in the YAML library into an error.
func (p *parser) decodeNode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	return dec.Decode(n)
}

// syntax reports the YAML parser's error in data, naming a tab indenting
// its line, the one before or, if it says "tab", a later one as the cause.
func (p *parser) syntax(err error, data []byte) {
	e := &Error{File: p.file, Msg: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: "), Err: err}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = "invalid YAML: " + m[2]
		to := e.Line
		if strings.Contains(m[2], "tab") {
			to = math.MaxInt
		}
		if strings.Contains(m[2], "tab") || strings.Contains(m[2], "cannot start any token") {
			if tab := tabLine(data, e.Line-1, to); tab > 0 {
				e.Line = tab
				e.Msg = "invalid YAML: a tab character indents this line; YAML allows spaces only (want spaces; the parser said: " + m[2] + ")"
			}
		}
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

// mapping calls set for each known key of resolved mapping n, reports
// unknown, duplicate and non-string keys, and returns the known key nodes.
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
			p.errorf(k, kpath, nil, "unknown key%s (want one of %s)", didYouMean(k.Value, keys), strings.Join(keys, ", "))
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

// scalar reports whether n is a scalar with one of tags, or an error.
func (p *parser) scalar(n *yaml.Node, path, want string, tags ...string) bool {
	if n.Kind != yaml.ScalarNode || !slices.Contains(tags, n.ShortTag()) {
		p.wrongType(n, path, want)
		return false
	}
	return true
}
