package inventory

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// maxInterruptsLine bounds one /proc/interrupts line: 11 bytes per
// online CPU, about 90 KiB for 8192 CPUs.
const maxInterruptsLine = 1 << 20

// maxInterruptsSize bounds the whole /proc/interrupts: room above the 40
// MiB of 768 CPUs with six per-CPU devices. A variable for tests.
var maxInterruptsSize int64 = 256 << 20

// Interrupts is the parsed /proc/interrupts.
type Interrupts struct {
	CPUs []int           // the CPU of each count column (online CPUs)
	Rows []InterruptLine // the numeric rows, in file order
}

// InterruptLine is one numeric row of /proc/interrupts, such as
//
//	24:   0   5  PCI-MSIX-0000:41:00.0  1-edge  virtio0-input.0
//
// Named rows (NMI, LOC ...) cannot be steered: the parser drops them.
type InterruptLine struct {
	IRQ int
	// Counts is indexed by CPU id; CPUs without a column hold 0. Slices
	// share one array per parse: do not append. nil in the inventory.
	Counts  []uint64
	Chip    string   // irq_chip name, "IR-PCI-MSIX-0000:41:00.0"
	HWIRQ   string   // between chip and actions ("1-edge", "27 Level")
	Actions []string // one handler name per shared handler
}

// isHWIRQ reports whether t is a hwirq column ("1-edge", "27"), not an
// action: 3.x kernels print none, and ahci then named its
// vector by its BDF ("0000:00:1f.2", drivers/ata/ahci.c).
func isHWIRQ(t []byte) bool {
	n, _, _ := bytes.Cut(t, []byte("-"))
	return kernfs.IsDigits(n)
}

// ParseInterrupts parses /proc/interrupts as show_interrupts() prints
// it. Errors wrap kernfs.ErrMalformed and name the line.
func ParseInterrupts(r io.Reader) (Interrupts, error) { return parseInterrupts(r, true) }

// parseInterrupts is ParseInterrupts, filling Counts when withCounts.
func parseInterrupts(r io.Reader, withCounts bool) (Interrupts, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxInterruptsLine)
	var (
		out    Interrupts
		width  int // len of each Counts slice
		arena  []uint64
		seen   = map[int]bool{}
		intern = map[string]string{}
		lineNo int
	)
	str := func(b []byte) string {
		if s, ok := intern[string(b)]; ok {
			return s
		}
		s := string(b)
		intern[s] = s
		return s
	}
	for sc.Scan() {
		lineNo++
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if out.CPUs == nil {
			cpus, err := parseInterruptsHeader(line)
			if err != nil {
				return Interrupts{}, lineErr(lineNo, line, "%v", err)
			}
			out.CPUs, width = cpus, slices.Max(cpus)+1
			continue
		}
		label, rest, err := splitLabel(line)
		if err != nil {
			return Interrupts{}, lineErr(lineNo, line, "%v", err)
		}
		if !kernfs.IsDigits(label) {
			continue // NMI, LOC, ERR, MIS, IPI0...: not a steerable IRQ
		}
		irq, err := strconv.Atoi(string(label))
		if err != nil {
			return Interrupts{}, lineErr(lineNo, line, "IRQ number %s out of range", kernfs.Quote(label))
		}
		if seen[irq] {
			return Interrupts{}, lineErr(lineNo, line, "IRQ %d listed twice", irq)
		}
		seen[irq] = true

		var counts []uint64
		if withCounts {
			if len(arena) < width {
				arena = make([]uint64, width*64)
			}
			counts = arena[:width:width]
			arena = arena[width:]
		}
		var tok []byte
		for i, cpu := range out.CPUs {
			tok, rest = kernfs.NextField(rest)
			if tok == nil {
				return Interrupts{}, lineErr(lineNo, line, "%d counts, want one per CPU column (%d)", i, len(out.CPUs))
			}
			n, ok := kernfs.ParseUint(tok)
			if !ok {
				return Interrupts{}, lineErr(lineNo, line, "count %s for CPU%d is not a number", kernfs.Quote(tok), cpu)
			}
			if withCounts {
				counts[cpu] = n
			}
		}
		// A number after the counts is a count without a column.
		if t, _ := kernfs.NextField(rest); kernfs.IsDigits(t) {
			return Interrupts{}, lineErr(lineNo, line, "more counts than the %d CPU columns", len(out.CPUs))
		}
		row := InterruptLine{IRQ: irq, Counts: counts}
		if tok, rest = kernfs.NextField(rest); tok != nil {
			row.Chip = str(tok)
		}
		// hwirq ("1-edge" or "27"), an optional Level/Edge
		// (CONFIG_GENERIC_IRQ_SHOW_LEVEL), a detached "-handler".
		var hw []byte
		if t, r := kernfs.NextField(rest); isHWIRQ(t) {
			hw, rest = t, r
		}
		if t, r := kernfs.NextField(rest); string(t) == "Level" || string(t) == "Edge" {
			hw, rest = joinField(hw, t), r
		}
		if t, r := kernfs.NextField(rest); len(t) > 1 && t[0] == '-' {
			hw, rest = joinField(hw, t), r
		}
		if hw != nil {
			row.HWIRQ = str(hw)
		}
		for a := range bytes.SplitSeq(bytes.TrimSpace(rest), []byte(",")) {
			if a = bytes.TrimSpace(a); len(a) > 0 {
				row.Actions = append(row.Actions, str(a))
			}
		}
		out.Rows = append(out.Rows, row)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return Interrupts{}, fmt.Errorf("line %d: longer than the limit of %d bytes: %w", lineNo+1, maxInterruptsLine, kernfs.ErrMalformed)
	} else if err != nil {
		return Interrupts{}, fmt.Errorf("line %d: %w", lineNo+1, err)
	}
	if out.CPUs == nil {
		return Interrupts{}, fmt.Errorf("no CPU header line: %w", kernfs.ErrMalformed)
	}
	return out, nil
}

// parseInterruptsHeader parses "  CPU0  CPU2  CPU3" into [0 2 3].
func parseInterruptsHeader(line []byte) ([]int, error) {
	var cpus []int
	seen := map[int]bool{}
	for tok, rest := kernfs.NextField(line); tok != nil; tok, rest = kernfs.NextField(rest) {
		num, ok := bytes.CutPrefix(tok, []byte("CPU"))
		if !ok || !kernfs.IsDigits(num) || len(num) > 5 {
			return nil, fmt.Errorf("header token %s is not CPUn", kernfs.Quote(tok))
		}
		c, _ := strconv.Atoi(string(num))
		if c >= cpumask.MaxCPUs {
			return nil, fmt.Errorf("header CPU %d is beyond the limit of %d CPUs", c, cpumask.MaxCPUs)
		}
		if seen[c] {
			return nil, fmt.Errorf("header lists CPU%d twice", c)
		}
		seen[c] = true
		cpus = append(cpus, c)
	}
	if len(cpus) == 0 {
		return nil, errors.New("header has no CPU columns")
	}
	return cpus, nil
}

// splitLabel returns a row's label, up to its colon, and what follows:
// digits for an IRQ, a letter first for a counter row.
func splitLabel(line []byte) (label, rest []byte, err error) {
	first, _ := kernfs.NextField(line)
	colon := bytes.IndexByte(first, ':')
	if colon < 0 {
		return nil, nil, errors.New("no colon after the IRQ label")
	}
	label = first[:colon]
	start := len(line) - len(bytes.TrimLeft(line, " \t\r\v\f"))
	rest = line[start+colon+1:]
	switch {
	case len(label) == 0:
		return nil, nil, errors.New("empty IRQ label")
	case kernfs.IsDigits(label):
	case 'A' <= label[0] && label[0] <= 'Z' || 'a' <= label[0] && label[0] <= 'z':
	default:
		return nil, nil, fmt.Errorf("label %s is neither an IRQ number nor a counter name such as NMI", kernfs.Quote(label))
	}
	return label, rest, nil
}

func lineErr(n int, line []byte, format string, args ...any) error {
	return fmt.Errorf("line %d %s: %s: %w", n, kernfs.Quote(line), fmt.Sprintf(format, args...), kernfs.ErrMalformed)
}

func joinField(a, b []byte) []byte {
	if a == nil || b[0] == '-' {
		return slices.Concat(a, b)
	}
	return slices.Concat(a, []byte(" "), b)
}
