package load

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"path/filepath"
	"strconv"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// maxStatLine bounds one line of /proc/stat that the parser reads. A
// cpuN line is "cpu8191" and ten counts of at most 20 digits, about 220
// bytes; the cap leaves room for fields a later kernel may append.
const maxStatLine = 4 << 10

// maxStatSize bounds how much of /proc/stat a read takes in. Only the
// cpu lines at its head are read (the long "intr" line with a count per
// IRQ number, and what follows it, never are), and MaxCPUs of them are
// about 1.8 MiB. A variable so tests can lower it.
var maxStatSize int64 = 4 << 20

// statFields is how many counts a cpuN line must have: user nice system
// idle iowait irq softirq steal. Kernels since 2.6.33 print ten, guest
// and guest_nice last.
const statFields = 8

// CPUStat is one cpuN line of /proc/stat, in USER_HZ ticks since boot
// (kernel/fs/proc/stat.c show_stat()).
type CPUStat struct {
	CPU int
	// IRQ and SoftIRQ are the hardirq and softirq columns.
	IRQ, SoftIRQ uint64
	// Total is user+nice+system+idle+iowait+irq+softirq+steal: the
	// CPU's whole time as the kernel accounts it. guest and guest_nice
	// are left out, as account_guest_time() counts them in user and
	// nice too. iowait alone may go down (proc(5)), while the time moves
	// to idle, so the sum stays monotonic where the field is not.
	Total uint64
}

// ParseStat returns the cpuN lines of /proc/stat in file order (the
// online CPUs, ascending on Linux); offline CPUs have no line. The
// aggregate "cpu" line is skipped, and the parse stops at the first
// other line after the cpu lines, so the rest of the file is not read. A
// malformed line gives an error that wraps kernfs.ErrMalformed and names
// the line number and quotes the line (cut by kernfs.Quote); the caller
// adds the file.
func ParseStat(r io.Reader) ([]CPUStat, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), maxStatLine)
	var (
		out    []CPUStat
		seen   []bool // by CPU id
		lineNo int
	)
	for sc.Scan() {
		lineNo++
		line := sc.Bytes()
		name, rest := kernfs.NextField(line)
		cpuLine := bytes.HasPrefix(name, []byte("cpu"))
		if !cpuLine {
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
		if cpu >= len(seen) {
			seen = append(seen, make([]bool, cpu+1-len(seen))...)
		}
		if seen[cpu] {
			return nil, statLineErr(lineNo, line, "CPU %d listed twice", cpu)
		}
		seen[cpu] = true
		st := CPUStat{CPU: cpu}
		n := 0
		for {
			var tok []byte
			if tok, rest = kernfs.NextField(rest); tok == nil {
				break
			}
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

// ReadStat reads and parses <Proc>/stat, at most maxStatSize bytes of
// it.
func (fsys FS) ReadStat() ([]CPUStat, error) {
	path := filepath.Join(fsys.Proc, "stat")
	f, err := kernfs.Open(path)
	if err != nil {
		return nil, fileErr(path, err)
	}
	defer f.Close()
	lr := &io.LimitedReader{R: f, N: maxStatSize + 1}
	cpus, err := ParseStat(lr)
	if lr.N <= 0 {
		// The parse saw a cut file; the size is the error to report.
		return nil, fileErr(path, kernfs.TooLarge(maxStatSize))
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return cpus, nil
}

func statLineErr(n int, line []byte, format string, args ...any) error {
	return fmt.Errorf("line %d %s: %s: %w", n, kernfs.Quote(line), fmt.Sprintf(format, args...), kernfs.ErrMalformed)
}
