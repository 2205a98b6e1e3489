package prometheus

import (
	"fmt"
	"strconv"
	"strings"
)

// A selector is a metric selector of a PromQL expression: the metric's
// name and its label matchers.
type selector struct {
	name     string
	matchers []matcher
}

type matcher struct{ label, op, value string }

// refs is what an expression names: its selectors and the labels of its
// by, without, on, ignoring, group_left and group_right clauses.
type refs struct {
	selectors []selector
	labels    []string
}

// keywords are PromQL's words that are not metric names: operators,
// aggregations (which may be followed by by/without instead of a
// parenthesis) and modifiers. Functions are told by the parenthesis
// after them.
var keywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
	"inf": true, "nan": true, "sum": true, "avg": true, "min": true, "max": true, "count": true,
	"stddev": true, "stdvar": true, "topk": true, "bottomk": true, "quantile": true,
	"count_values": true, "group": true, "limitk": true, "limit_ratio": true,
}

// labelClauses take a parenthesised list of label names.
var labelClauses = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// parsePromQL finds the metric selectors and grouping labels of expr.
// It is a lexer, not a parser: enough to tell metric names from
// functions, keywords, label names, strings, durations and Grafana's
// $variables in the expressions this directory holds; promtool checks
// their syntax.
func parsePromQL(expr string) (refs, error) {
	var r refs
	s := &scanner{src: expr}
	for {
		s.space()
		if s.eof() {
			return r, nil
		}
		c := s.peek()
		switch {
		case c == '#':
			for !s.eof() && s.peek() != '\n' {
				s.i++
			}
		case c == '"' || c == '\'' || c == '`':
			if _, err := s.str(); err != nil {
				return r, err
			}
		case c == '[':
			if err := s.skipTo(']'); err != nil {
				return r, err
			}
		case c == '$':
			s.i++
			if !s.eof() && s.peek() == '{' {
				if err := s.skipTo('}'); err != nil {
					return r, err
				}
			} else {
				s.ident()
			}
		case c == '{':
			ms, err := s.matchers()
			if err != nil {
				return r, err
			}
			sel := selector{matchers: ms}
			for _, m := range ms {
				if m.label == "__name__" && m.op == "=" {
					sel.name = m.value
				}
			}
			r.selectors = append(r.selectors, sel)
		case isDigit(c) || c == '.':
			for !s.eof() && (isIdent(s.peek()) || s.peek() == '.') {
				s.i++
			}
		case isIdentStart(c):
			word := s.ident()
			s.space()
			switch {
			case labelClauses[strings.ToLower(word)]:
				if !s.eof() && s.peek() == '(' {
					ls, err := s.labelList()
					if err != nil {
						return r, err
					}
					r.labels = append(r.labels, ls...)
				}
			case keywords[strings.ToLower(word)]:
			case !s.eof() && s.peek() == '(':
				// a function
			default:
				sel := selector{name: word}
				if !s.eof() && s.peek() == '{' {
					ms, err := s.matchers()
					if err != nil {
						return r, err
					}
					sel.matchers = ms
				}
				r.selectors = append(r.selectors, sel)
			}
		default:
			s.i++
		}
	}
}

type scanner struct {
	src string
	i   int
}

func (s *scanner) eof() bool  { return s.i >= len(s.src) }
func (s *scanner) peek() byte { return s.src[s.i] }

func (s *scanner) space() {
	for !s.eof() && strings.IndexByte(" \t\r\n", s.peek()) >= 0 {
		s.i++
	}
}

func (s *scanner) ident() string {
	start := s.i
	for !s.eof() && isIdent(s.peek()) {
		s.i++
	}
	return s.src[start:s.i]
}

func (s *scanner) skipTo(end byte) error {
	start := s.i
	if i := strings.IndexByte(s.src[s.i:], end); i >= 0 {
		s.i += i + 1
		return nil
	}
	return fmt.Errorf("offset %d: no closing %q in %q", start, end, s.src)
}

// str reads a quoted string and returns its value.
func (s *scanner) str() (string, error) {
	start, q := s.i, s.peek()
	s.i++
	for !s.eof() && s.peek() != q {
		if s.peek() == '\\' && q != '`' {
			s.i++
		}
		s.i++
	}
	if s.eof() {
		return "", fmt.Errorf("offset %d: unterminated string in %q", start, s.src)
	}
	s.i++
	lit := s.src[start:s.i]
	if q == '\'' {
		inner := strings.ReplaceAll(lit[1:len(lit)-1], `\'`, `'`)
		lit = `"` + strings.ReplaceAll(inner, `"`, `\"`) + `"`
	}
	v, err := strconv.Unquote(lit)
	if err != nil {
		return "", fmt.Errorf("offset %d: string %s: %w", start, lit, err)
	}
	return v, nil
}

// matchers reads {label op "value", ...}.
func (s *scanner) matchers() ([]matcher, error) {
	start := s.i
	s.i++ // {
	var out []matcher
	for {
		s.space()
		if s.eof() {
			return nil, fmt.Errorf("offset %d: no closing } in %q", start, s.src)
		}
		if s.peek() == '}' {
			s.i++
			return out, nil
		}
		if s.peek() == ',' {
			s.i++
			continue
		}
		label := s.ident()
		s.space()
		var op string
		for _, o := range []string{"=~", "!~", "!=", "="} {
			if strings.HasPrefix(s.src[s.i:], o) {
				op = o
				break
			}
		}
		if label == "" || op == "" {
			return nil, fmt.Errorf("offset %d: want label op \"value\" in %q", s.i, s.src)
		}
		s.i += len(op)
		s.space()
		if s.eof() || strings.IndexByte("\"'`", s.peek()) < 0 {
			return nil, fmt.Errorf("offset %d: want a quoted value in %q", s.i, s.src)
		}
		v, err := s.str()
		if err != nil {
			return nil, err
		}
		out = append(out, matcher{label, op, v})
	}
}

// labelList reads (label, ...).
func (s *scanner) labelList() ([]string, error) {
	start := s.i
	s.i++ // (
	var out []string
	for {
		s.space()
		if s.eof() {
			return nil, fmt.Errorf("offset %d: no closing ) in %q", start, s.src)
		}
		switch c := s.peek(); {
		case c == ')':
			s.i++
			return out, nil
		case c == ',':
			s.i++
		case isIdentStart(c):
			out = append(out, s.ident())
		default:
			return nil, fmt.Errorf("offset %d: want a label name in %q", s.i, s.src)
		}
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
func isIdent(c byte) bool { return isIdentStart(c) || isDigit(c) }
