package load

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// maxStatLine bounds one line of /proc/stat (a cpuN line is ~220 bytes).
const maxStatLine = 4 << 10

// maxStatSize bounds how much of /proc/stat a read takes in: the cpu
// lines are about 1.8 MiB for MaxCPUs. A variable for tests.
var maxStatSize int64 = 4 << 20

// statFields is how many counts a cpuN line must have: user nice system
// idle iowait irq softirq steal.
const statFields = 8

// CPUStat is one cpuN line of /proc/stat, in USER_HZ ticks since boot.
type CPUStat struct {
	CPU          int
	IRQ, SoftIRQ uint64
	// Total sums the first statFields counts, the CPU's whole time
	// (guest time is in user and nice already).
	Total uint64
}

// ParseStat returns the cpuN lines of /proc/stat (the online CPUs) in
// file order, reading no further. Errors wrap kernfs.ErrMalformed and
// name the line.
func ParseStat(r io.Reader) ([]CPUStat, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), maxStatLine)
	var (
		out    []CPUStat
		seen   = map[int]bool{}
		lineNo int
	)
	for sc.Scan() {
		lineNo++
		line := sc.Bytes()
		name, rest := kernfs.NextField(line)
		if !bytes.HasPrefix(name, []byte("cpu")) {
			if len(out) > 0 {
				break // "intr", "ctxt"...: the cpu lines are over
			}
			continue
		}
		if len(name) == 3 {
			continue // "cpu", the sum over online CPUs
		}
		num := name[3:]
		if !kernfs.IsDigits(num) || len(num) > 5 {
			return nil, statLineErr(lineNo, line, "%s is not cpuN", kernfs.Quote(name))
		}
		cpu, _ := strconv.Atoi(string(num))
		if cpu >= cpumask.MaxCPUs {
			return nil, statLineErr(lineNo, line, "CPU %d is beyond the limit of %d CPUs", cpu, cpumask.MaxCPUs)
		}
		if seen[cpu] {
			return nil, statLineErr(lineNo, line, "CPU %d listed twice", cpu)
		}
		seen[cpu] = true
		st := CPUStat{CPU: cpu}
		n := 0
		for tok, rest := kernfs.NextField(rest); tok != nil; tok, rest = kernfs.NextField(rest) {
			v, ok := kernfs.ParseUint(tok)
			if !ok {
				return nil, statLineErr(lineNo, line, "field %d %s is not a count", n+1, kernfs.Quote(tok))
			}
			if n < statFields {
				var carry uint64
				if st.Total, carry = bits.Add64(st.Total, v, 0); carry != 0 {
					return nil, statLineErr(lineNo, line, "counts add up past 2^64 ticks")
				}
			}
			switch n {
			case 5:
				st.IRQ = v
			case 6:
				st.SoftIRQ = v
			}
			n++
		}
		if n < statFields {
			return nil, statLineErr(lineNo, line, "%d counts, want at least %d (user nice system idle iowait irq softirq steal)", n, statFields)
		}
		out = append(out, st)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("line %d: longer than the limit of %d bytes: %w", lineNo+1, maxStatLine, kernfs.ErrMalformed)
	} else if err != nil {
		return nil, fmt.Errorf("line %d: %w", lineNo+1, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cpuN lines: %w", kernfs.ErrMalformed)
	}
	return out, nil
}

func statLineErr(n int, line []byte, format string, args ...any) error {
	return fmt.Errorf("line %d %s: %s: %w", n, kernfs.Quote(line), fmt.Sprintf(format, args...), kernfs.ErrMalformed)
}
