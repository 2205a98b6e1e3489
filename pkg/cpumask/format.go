package cpumask

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// syntaxError is a parse error: "invalid CPU mask list "3-1": ...". It
// wraps kernfs.ErrMalformed, the sentinel for kernel text that does not
// parse, without putting that sentinel's text in the message.
type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return e.msg }
func (e *syntaxError) Unwrap() error { return kernfs.ErrMalformed }

// parseErr quotes the whole input once, cut by kernfs.Quote; the
// reason names the bad part with part, so a long input is not quoted
// again.
func parseErr(format, input, why string, args ...any) error {
	return &syntaxError{fmt.Sprintf("invalid CPU mask %s %s: %s", format, kernfs.Quote(input), fmt.Sprintf(why, args...))}
}

// part quotes a piece of the input when it is short enough to show in
// full; a longer piece, which the quoted input already shows the start
// of, is described by its length alone.
func part(s string) string {
	if len(s) <= kernfs.QuoteLimit {
		return kernfs.Quote(s)
	}
	return fmt.Sprintf("of %d bytes", len(s))
}

// ParseList parses the kernel's list format (%*pbl), as in cpulist,
// smp_affinity_list and devices/system/cpu/online: "0-3,8,10-11". An
// empty string (or only white space) is the empty set. Surrounding white
// space, such as a file's trailing newline, is ignored.
func ParseList(s string) (Mask, error) {
	body := strings.TrimSpace(s)
	if body == "" {
		return Mask{}, nil
	}
	var b Builder
	for elem := range strings.SplitSeq(body, ",") {
		lo, hi, isRange := strings.Cut(elem, "-")
		first, err := parseCPU(lo)
		if err != nil {
			return Mask{}, parseErr("list", s, "element %s: %v", part(elem), err)
		}
		last := first
		if isRange {
			if last, err = parseCPU(hi); err != nil {
				return Mask{}, parseErr("list", s, "element %s: %v", part(elem), err)
			}
			if last < first {
				return Mask{}, parseErr("list", s, "reversed range %s", part(elem))
			}
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
	for _, r := range s {
		if r < '0' || r > '9' {
			if len(s) > kernfs.QuoteLimit {
				return 0, errors.New("not a CPU number")
			}
			return 0, fmt.Errorf("%s is not a CPU number", kernfs.Quote(s))
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n >= MaxCPUs {
		if len(s) > kernfs.QuoteLimit {
			return 0, fmt.Errorf("a CPU number of %d digits is beyond the limit of %d CPUs", len(s), MaxCPUs)
		}
		return 0, fmt.Errorf("CPU %s is beyond the limit of %d CPUs", s, MaxCPUs)
	}
	return n, nil
}

// String formats m in the kernel's list format, the empty string for the
// empty set. ParseList(m.String()) equals m.
func (m Mask) String() string {
	var sb strings.Builder
	start, prev := -1, -1
	flush := func() {
		if start < 0 {
			return
		}
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(start))
		if prev > start {
			sb.WriteByte('-')
			sb.WriteString(strconv.Itoa(prev))
		}
	}
	for c := range m.All() {
		if c != prev+1 || start < 0 {
			flush()
			start = c
		}
		prev = c
	}
	flush()
	return sb.String()
}

// ParseHex parses the kernel's hex mask format (%*pb), as in smp_affinity:
// comma-separated groups of up to 8 hex digits (32 CPUs each), most
// significant group first, e.g. "00000000,00010000" is CPU 16.
// Surrounding white space is ignored.
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
		base := (len(groups) - 1 - i) * 32
		for bit := 0; v != 0; bit++ {
			if v&1 != 0 {
				if base+bit >= MaxCPUs {
					return Mask{}, parseErr("hex", s, "CPU %d is beyond the limit of %d CPUs", base+bit, MaxCPUs)
				}
				b.Set(base + bit)
			}
			v >>= 1
		}
	}
	return b.Mask(), nil
}

// Hex formats m in the kernel's hex format for a machine of nbits CPU ids
// (nr_cpu_ids), as the kernel prints smp_affinity: the first group has
// only the digits nbits needs, the others eight. nbits is raised to hold
// m's highest CPU; nbits < 1 counts as 1 and nbits > MaxCPUs as MaxCPUs.
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
		s := strconv.FormatUint(v, 16)
		sb.WriteString(strings.Repeat("0", max(width-len(s), 0)))
		sb.WriteString(s)
		if g > 0 {
			sb.WriteByte(',')
		}
	}
	return sb.String()
}
