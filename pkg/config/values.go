package config

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

const (
	wantCPUList  = `a CPU list like "0-3,8"`
	wantDuration = `a Go duration like "60s" or "100ms"`
	wantListen   = `host:port such as "127.0.0.1:9768", or "" to disable`
	wantEnvFile  = `an absolute path, "auto" (the first of /etc/sysconfig/irqbalance, /etc/default/irqbalance that exists) or "" for none`
)

func (p *parser) str(n *yaml.Node, path, want string) (string, bool) {
	if !p.scalar(n, path, want, "!!str") {
		return "", false
	}
	return n.Value, true
}

// decodeScalar decodes n, a scalar with one of tags, into a T (a what).
func decodeScalar[T any](p *parser, n *yaml.Node, path, what, want string, tags ...string) (T, bool) {
	var v T
	if !p.scalar(n, path, want, tags...) {
		return v, false
	}
	if err := n.Decode(&v); err != nil {
		p.errorf(n, path, err, "invalid %s %q (want %s)", what, n.Value, want)
		return v, false
	}
	return v, true
}

func (p *parser) boolean(n *yaml.Node, path string) (bool, bool) {
	if p.stringFor(n, path, "true or false", "true", "false") {
		return false, false
	}
	return decodeScalar[bool](p, n, path, "boolean", "true or false", "!!bool")
}

// duration parses a Go duration > 0, >= lo and, unless hi is 0, <= hi.
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
	case hi > 0 && (d <= 0 || d > hi):
		p.errorf(n, path, nil, "%s is out of range (want more than 0 and at most %s)", d, hi)
	case d <= 0:
		p.errorf(n, path, nil, "%s is out of range (want more than 0)", d)
	default:
		return d, true
	}
	return 0, false
}

// cpuList parses a kernel list string, or an integer as a single CPU.
func (p *parser) cpuList(n *yaml.Node, path string) (cpumask.Mask, bool) {
	if !p.scalar(n, path, wantCPUList, "!!str", "!!int") {
		return cpumask.Mask{}, false
	}
	m, err := cpumask.ParseList(n.Value)
	if err != nil {
		if hint := hexHint(n.Value); hint != "" {
			p.errorf(n, path, err, "%s (want %s)", hint, wantCPUList)
		} else {
			p.errorf(n, path, err, "%v", err)
		}
		return cpumask.Mask{}, false
	}
	return m, true
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
		p.errorf(n, path, nil, "unknown %s %q%s (want %s)", what, s, didYouMean(s, names), want)
		return valid[0], false
	}
	return T(s), true
}

// fraction parses a number from 0 up to but not including 1.
func (p *parser) fraction(n *yaml.Node, path string) (float64, bool) {
	const want = "a number from 0 up to, not including, 1, such as 0.1"
	f, ok := decodeScalar[float64](p, n, path, "number", want, "!!float", "!!int")
	if ok && !(f >= 0 && f < 1) { // also refuses NaN
		p.errorf(n, path, nil, "%s is out of range (want %s)", n.Value, want)
		return 0, false
	}
	return f, ok
}

// integer parses an integer from lo to hi; want, if set, replaces the
// default "an integer from lo to hi".
func (p *parser) integer(n *yaml.Node, path string, lo, hi int, want string) (int, bool) {
	if want == "" {
		want = fmt.Sprintf("an integer from %d to %d", lo, hi)
	}
	v, ok := decodeScalar[int](p, n, path, "integer", want, "!!int")
	if ok && (v < lo || v > hi) {
		p.errorf(n, path, nil, "%d is out of range (want %s)", v, want)
		return 0, false
	}
	return v, ok
}

// CheckListen validates a listen address: host:port, or "" for none.
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

// listenError is CheckListen's error, wrapping the net or strconv one.
type listenError struct {
	msg string
	err error
}

func (e *listenError) Error() string { return e.msg }
func (e *listenError) Unwrap() error { return e.err }
