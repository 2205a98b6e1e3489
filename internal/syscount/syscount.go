// Package syscount reports a benchmark's read and write system calls
// per operation, from the process's /proc/self/io (syscr, syscw: every
// read(2)- and write(2)-family call of every thread). Opens and closes
// are not counted there; for the kernel files numairqd reads each read
// comes with one open and one close.
package syscount

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// Counts are the syscr and syscw of /proc/self/io.
type Counts struct{ Reads, Writes uint64 }

// Read reads the counts now.
func Read() (Counts, error) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return Counts{}, err
	}
	var c Counts
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte(": "))
		if !ok {
			continue
		}
		var dst *uint64
		switch string(k) {
		case "syscr":
			dst = &c.Reads
		case "syscw":
			dst = &c.Writes
		default:
			continue
		}
		n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
		if err != nil {
			return Counts{}, fmt.Errorf("/proc/self/io: %s %q: %w", k, v, err)
		}
		*dst = n
		found++
	}
	if found != 2 {
		return Counts{}, fmt.Errorf("/proc/self/io: no syscr and syscw (CONFIG_TASK_IO_ACCOUNTING off?)")
	}
	return c, nil
}

// Measure runs prepare (untimed, uncounted) and round b.N times under
// b.Loop, and reports the syscr/op and syscw/op of round beside the
// usual figures; without /proc/self/io it reports neither and says why
// in the log. prepare may be nil.
func Measure(b *testing.B, prepare func(i int), round func()) {
	b.Helper()
	var total Counts
	counted := true
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		if prepare != nil {
			b.StopTimer()
			prepare(n)
			b.StartTimer()
		}
		start, err := Read()
		round()
		end, err2 := Read()
		if err != nil || err2 != nil {
			if counted {
				b.Logf("syscalls not counted: %v", errors.Join(err, err2))
			}
			counted = false
		}
		total.Reads += end.Reads - start.Reads
		total.Writes += end.Writes - start.Writes
		n++
	}
	if counted {
		// Each Read is one read(2) (and an open and a close) of its own.
		b.ReportMetric(float64(total.Reads)/float64(n)-1, "syscr/op")
		b.ReportMetric(float64(total.Writes)/float64(n), "syscw/op")
	}
}
