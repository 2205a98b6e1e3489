package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// IRQSet is a set of IRQ numbers: ranges, each Lo <= Hi.
type IRQSet []IRQRange

// IRQRange is the IRQ numbers from Lo to Hi.
type IRQRange struct{ Lo, Hi int }

// Contains reports whether n is in s.
func (s IRQSet) Contains(n int) bool {
	return slices.ContainsFunc(s, func(r IRQRange) bool { return r.Lo <= n && n <= r.Hi })
}

// String is s as a list, "25,30-31".
func (s IRQSet) String() string {
	parts := make([]string, len(s))
	for i, r := range s {
		parts[i] = strconv.Itoa(r.Lo)
		if r.Hi != r.Lo {
			parts[i] += "-" + strconv.Itoa(r.Hi)
		}
	}
	return strings.Join(parts, ",")
}

const wantIRQList = `IRQ numbers: a list like "25,30-31", one number, or a sequence of them such as [25, 30-31]`

// maxIRQRanges bounds the ranges of one irq_numbers.
const maxIRQRanges = 1000

// irqNumbers reads irq_numbers: a scalar list, or a sequence of them.
func (p *parser) irqNumbers(n *yaml.Node, path string) IRQSet {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	var s IRQSet
	for i, item := range items {
		ipath := path
		if n.Kind == yaml.SequenceNode {
			ipath = fmt.Sprintf("%s[%d]", path, i)
		}
		item = resolve(item)
		if !p.scalar(item, ipath, wantIRQList, "!!str", "!!int") {
			return nil
		}
		for _, part := range strings.Split(item.Value, ",") {
			r, err := irqRange(strings.TrimSpace(part))
			if err != nil {
				p.errorf(item, ipath, nil, "%q: %v (want %s)", item.Value, err, wantIRQList)
				return nil
			}
			if len(s) == maxIRQRanges {
				p.errorf(item, ipath, nil, "more than %d ranges (want at most %d)", maxIRQRanges, maxIRQRanges)
				return nil
			}
			s = append(s, r)
		}
	}
	if len(s) == 0 {
		p.errorf(n, path, nil, "empty (want %s)", wantIRQList)
	}
	return s
}

// irqRange parses "N" or "N-M".
func irqRange(s string) (IRQRange, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	a, err := strconv.ParseUint(lo, 10, 31)
	b := a
	if err == nil && isRange {
		b, err = strconv.ParseUint(hi, 10, 31)
	}
	switch {
	case err != nil:
		return IRQRange{}, fmt.Errorf("%q is not an IRQ number or range (numbers from 0 to %d)", s, math.MaxInt32)
	case b < a:
		return IRQRange{}, fmt.Errorf("range %q ends before it starts", s)
	}
	return IRQRange{int(a), int(b)}, nil
}
