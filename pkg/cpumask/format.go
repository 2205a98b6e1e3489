package cpumask

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/malformed"
)

// syntaxError is a parse error that wraps malformed.Err silently.
type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return e.msg }
func (e *syntaxError) Unwrap() error { return malformed.Err }

// parseErr quotes the whole input once; why names the bad part with part.
func parseErr(format, input, why string, args ...any) error {
	return &syntaxError{fmt.Sprintf("invalid CPU mask %s %s: %s", format, malformed.Quote(input), fmt.Sprintf(why, args...))}
}

// part quotes a short piece of the input, or gives its length.
func part(s string) string {
	if len(s) <= malformed.QuoteLimit {
		return malformed.Quote(s)
	}
	return fmt.Sprintf("of %d bytes", len(s))
}

// ParseList parses the kernel's list format (%*pbl), "0-3,8,10-11",
// ignoring surrounding white space; "" is the empty set.
func ParseList(s string) (Mask, error) {
	body := strings.TrimSpace(s)
	if body == "" {
		return Mask{}, nil
	}
	var b Builder
	for elem := range strings.SplitSeq(body, ",") {
		lo, hi, isRange := strings.Cut(elem, "-")
		if !isRange {
			hi = lo
		}
		first, errLo := parseCPU(lo)
		last, errHi := parseCPU(hi)
		if err := cmp.Or(errLo, errHi); err != nil {
			return Mask{}, parseErr("list", s, "element %s: %v", part(elem), err)
		}
		if last < first {
			return Mask{}, parseErr("list", s, "reversed range %s", part(elem))
		}
		for c := first; c <= last; c++ {
			b.Set(c)
		}
	}
	return b.Mask(), nil
}

func parseCPU(s string) (int, error) {
	if s == "" {
		return 0, errors.New("missing CPU number")
	}
	n, err := strconv.ParseUint(s, 10, 32)
	switch {
	case errors.Is(err, strconv.ErrSyntax) && len(s) > malformed.QuoteLimit:
		return 0, errors.New("not a CPU number")
	case errors.Is(err, strconv.ErrSyntax):
		return 0, fmt.Errorf("%s is not a CPU number", malformed.Quote(s))
	case (err != nil || n >= MaxCPUs) && len(s) > malformed.QuoteLimit:
		return 0, fmt.Errorf("a CPU number of %d digits is beyond the limit of %d CPUs", len(s), MaxCPUs)
	case err != nil || n >= MaxCPUs:
		return 0, fmt.Errorf("CPU %s is beyond the limit of %d CPUs", s, MaxCPUs)
	}
	return int(n), nil
}

// String formats m in the kernel's list format, "" for the empty set.
func (m Mask) String() string {
	var sb strings.Builder
	for c := m.First(); c >= 0; {
		end := c
		for m.Contains(end + 1) {
			end++
		}
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(c))
		if end > c {
			sb.WriteString("-" + strconv.Itoa(end))
		}
		c = m.Next(end)
	}
	return sb.String()
}

// ParseHex parses the kernel's hex mask format (%*pb): groups of up to 8
// hex digits, most significant first ("00000000,00010000" is CPU 16).
func ParseHex(s string) (Mask, error) {
	body := strings.TrimSpace(s)
	if body == "" {
		return Mask{}, parseErr("hex", s, "no digits")
	}
	groups := strings.Split(body, ",")
	var b Builder
	for i, g := range groups {
		if g == "" || len(g) > 8 {
			return Mask{}, parseErr("hex", s, "group %d is %s, want 1 to 8 hex digits", i+1, part(g))
		}
		v, err := strconv.ParseUint(g, 16, 32)
		if err != nil {
			return Mask{}, parseErr("hex", s, "group %d %s is not hex", i+1, part(g))
		}
		for ; v != 0; v &= v - 1 {
			c := (len(groups)-1-i)*32 + bits.TrailingZeros64(v)
			if c >= MaxCPUs {
				return Mask{}, parseErr("hex", s, "CPU %d is beyond the limit of %d CPUs", c, MaxCPUs)
			}
			b.Set(c)
		}
	}
	return b.Mask(), nil
}

// Hex formats m as the kernel prints smp_affinity for nbits (nr_cpu_ids)
// CPU ids, raised to hold m and clamped to [1, MaxCPUs].
func (m Mask) Hex(nbits int) string {
	nbits = max(min(nbits, MaxCPUs), m.Last()+1, 1)
	groups := (nbits + 31) / 32
	var sb strings.Builder
	for g := groups - 1; g >= 0; g-- {
		var v uint64
		if i := g * 32 / wordBits; i < len(m.w) {
			v = (m.w[i] >> (uint(g*32) % wordBits)) & 0xffffffff
		}
		width := 8
		if g == groups-1 {
			width = (nbits - 32*g + 3) / 4
		}
		fmt.Fprintf(&sb, "%0*x", width, v)
		if g > 0 {
			sb.WriteByte(',')
		}
	}
	return sb.String()
}

// MarshalText is m in the list format, as /plan and /status show it.
func (m Mask) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText parses the list format into m, unchanged on error.
func (m *Mask) UnmarshalText(b []byte) error {
	p, err := ParseList(string(b))
	if err != nil {
		return err
	}
	*m = p
	return nil
}

// IsZero reports whether m is empty, for omitzero.
func (m Mask) IsZero() bool { return m.IsEmpty() }
