package measure

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// UserHZ is the unit of utime and stime in /proc/PID/stat: USER_HZ,
// 100 on x86.
const UserHZ = 100

// CPUTicks returns utime+stime (fields 14 and 15) of a /proc/PID/stat
// line.
func CPUTicks(stat string) (int64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/PID/stat %.60q: no ')'", stat)
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); utime is field 14.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/PID/stat %.60q: %d fields after the name", stat, len(f))
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/PID/stat %.60q: utime %q stime %q", stat, f[11], f[12])
	}
	return u + s, nil
}

// StatusKB returns a "Key:   N kB" field of /proc/PID/status.
func StatusKB(status, key string) (int64, error) {
	for _, line := range strings.Split(status, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != key {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			break
		}
		return strconv.ParseInt(f[0], 10, 64)
	}
	return 0, fmt.Errorf("/proc/PID/status: no %s", key)
}

// SchedstatNS sums the first field (time spent on a CPU, ns) of
// /proc/PID/task/*/schedstat lines, one per thread: the process's CPU
// time at nanosecond resolution, without the threads that have exited.
// It returns the sum and the number of threads.
func SchedstatNS(s string) (ns int64, threads int, err error) {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("schedstat line %.60q: %w", line, err)
		}
		ns += v
		threads++
	}
	if threads == 0 {
		return 0, 0, fmt.Errorf("no schedstat line in %.80q", s)
	}
	return ns, threads, nil
}

// IO is the part of /proc/PID/io the bench uses (CONFIG_TASK_IO_ACCOUNTING):
// syscr and syscw count the read and write family of system calls
// (read, pread64, readv, write, writev, ...; not open, close, stat,
// recvmsg or sendmsg) of every thread of the process, whether they
// succeed or not; rchar and wchar the bytes they moved.
type IO struct {
	SyscR, SyscW, RChar, WChar int64
}

// ParseIO parses /proc/PID/io ("syscr: 123" lines). A file without
// syscr or syscw is an error, so that a kernel without
// CONFIG_TASK_IO_ACCOUNTING shows as missing, not as zero.
func ParseIO(s string) (IO, error) {
	var io IO
	if strings.TrimSpace(s) == "" {
		return io, errors.New("/proc/PID/io not sampled")
	}
	dst := map[string]*int64{"syscr": &io.SyscR, "syscw": &io.SyscW, "rchar": &io.RChar, "wchar": &io.WChar}
	seen := map[string]bool{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		k = strings.TrimSpace(k)
		p := dst[k]
		if !ok || p == nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return IO{}, fmt.Errorf("/proc/PID/io: %s: %w", k, err)
		}
		*p = n
		seen[k] = true
	}
	if !seen["syscr"] || !seen["syscw"] {
		return IO{}, fmt.Errorf("/proc/PID/io: no syscr/syscw in %.80q", s)
	}
	return io, nil
}

// PromSums sums the samples of a Prometheus text exposition by metric
// name, over all label values: `a{x="1"} 2` and `a{x="2"} 3` give
// a=5. Comments and lines that do not parse are skipped.
func PromSums(text string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		var name, rest string
		if i := strings.IndexByte(line, '{'); i >= 0 {
			j := strings.LastIndexByte(line, '}')
			if j < i {
				continue
			}
			name, rest = line[:i], line[j+1:]
		} else {
			name, rest, _ = strings.Cut(line, " ")
		}
		f := strings.Fields(rest)
		if name == "" || len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		out[name] += v
	}
	return out
}

// RoundsMetric is numairqd's count of reconcile rounds (pkg/metrics),
// labelled by trigger; WritesMetric its smp_affinity_list writes by
// result, "ok" for a write the kernel took (pkg/apply's Kind names).
const (
	RoundsMetric = "numairqd_rounds_total"
	WritesMetric = "numairqd_affinity_writes_total"
)

// ParseCostSample parses the output of the bench's probe of a daemon
// (costProbe in bench/qemu_test.go): sections that each start with a
// line "=== NAME", NAME one of uptime, stat, status, io, metrics, in any
// order. uptime, stat and status are required; schedstat, io and
// metrics are kept as they came (an error message if a file was
// missing), to be parsed by CostBetween.
func ParseCostSample(out string) (CostSample, error) {
	var c CostSample
	sections := map[string]*strings.Builder{}
	var cur *strings.Builder
	for _, line := range strings.SplitAfter(out, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "=== "); ok {
			cur = &strings.Builder{}
			sections[name] = cur
			continue
		}
		if cur != nil {
			cur.WriteString(line)
		}
	}
	get := func(name string) (string, bool) {
		b, ok := sections[name]
		if !ok {
			return "", false
		}
		return b.String(), true
	}
	up, ok1 := get("uptime")
	stat, ok2 := get("stat")
	status, ok3 := get("status")
	if !ok1 || !ok2 || !ok3 {
		return c, fmt.Errorf("probe output %.200q: want sections uptime, stat and status", out)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(up), 64)
	if err != nil {
		return c, fmt.Errorf("probe output: uptime: %w", err)
	}
	c.UptimeS, c.Stat, c.Status = v, strings.TrimSpace(stat), status
	c.Schedstat, _ = get("schedstat")
	c.IO, _ = get("io")
	c.Metrics, _ = get("metrics")
	return c, nil
}

// Cost is what a daemon used over one period, between two samples.
type Cost struct {
	CPUS float64 // utime+stime over the period, seconds
	// RunS is the same from the threads' schedstat, at ns resolution;
	// NaN if either sample has none or a thread's exit made it shrink.
	RunS    float64
	PeriodS float64
	HWMKB   int64 // VmHWM at the end of the period
	RSSKB   int64 // VmRSS at the end of the period; 0 if missing
	// Syscalls is syscr+syscw over the period; NaN if either sample has
	// no /proc/PID/io (IOErr says why).
	Syscalls float64
	IOErr    error
	// Rounds and Writes are the increase of numairqd_rounds_total and
	// of numairqd_affinity_writes_total{result="ok"} over the
	// period, from the daemon's metrics endpoint; NaN without metrics
	// in either sample (irqbalance, the floor).
	Rounds, Writes float64
	// AppliedS is numairqd's own mean time from the first event of a
	// burst to the end of the apply it caused, over the bursts that
	// ended in the period (numairqd_event_to_applied_seconds): the
	// daemon's share of a reaction, without the write that made the
	// event or the poll that saw the result. NaN when none ended or
	// without metrics.
	AppliedS float64
}

// AppliedMetric is numairqd's event-to-applied histogram (pkg/metrics).
const AppliedMetric = "numairqd_event_to_applied_seconds"

// CostBetween computes the cost from two samples.
func CostBetween(a, b CostSample) (Cost, error) {
	ta, err := CPUTicks(a.Stat)
	if err != nil {
		return Cost{}, err
	}
	tb, err := CPUTicks(b.Stat)
	if err != nil {
		return Cost{}, err
	}
	hwm, err := StatusKB(b.Status, "VmHWM")
	if err != nil {
		return Cost{}, err
	}
	rss, _ := StatusKB(b.Status, "VmRSS")
	c := Cost{CPUS: float64(tb-ta) / UserHZ, PeriodS: b.UptimeS - a.UptimeS, HWMKB: hwm, RSSKB: rss,
		RunS: math.NaN(), Syscalls: math.NaN(), Rounds: math.NaN(), Writes: math.NaN(), AppliedS: math.NaN()}
	na, _, err1 := SchedstatNS(a.Schedstat)
	nb, _, err2 := SchedstatNS(b.Schedstat)
	if err1 == nil && err2 == nil && nb >= na {
		c.RunS = float64(nb-na) / 1e9
	}
	ia, err1 := ParseIO(a.IO)
	ib, err2 := ParseIO(b.IO)
	if c.IOErr = err1; err1 == nil {
		c.IOErr = err2
	}
	if c.IOErr == nil {
		c.Syscalls = float64(ib.SyscR + ib.SyscW - ia.SyscR - ia.SyscW)
	}
	ma, mb := PromSums(a.Metrics), PromSums(b.Metrics)
	if ra, ok := ma[RoundsMetric]; ok {
		if rb, ok := mb[RoundsMetric]; ok {
			c.Rounds = rb - ra
		}
	}
	if n := mb[AppliedMetric+"_count"] - ma[AppliedMetric+"_count"]; n > 0 {
		c.AppliedS = (mb[AppliedMetric+"_sum"] - ma[AppliedMetric+"_sum"]) / n
	}
	wa, wb := promWritten(a.Metrics), promWritten(b.Metrics)
	if !math.IsNaN(wa) && !math.IsNaN(wb) {
		c.Writes = wb - wa
	}
	return c, nil
}

// promWritten is numairqd_affinity_writes_total{result="ok"}, the
// writes that took, NaN if absent.
func promWritten(text string) float64 {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, WritesMetric+"{"); ok && strings.Contains(rest, `result="ok"`) {
			if i := strings.LastIndexByte(rest, '}'); i >= 0 {
				if v, err := strconv.ParseFloat(strings.TrimSpace(rest[i+1:]), 64); err == nil {
					return v
				}
			}
		}
	}
	return math.NaN()
}

// PerRound divides x by the rounds of c: NaN without rounds.
func (c Cost) PerRound(x float64) float64 {
	if math.IsNaN(c.Rounds) || c.Rounds <= 0 {
		return math.NaN()
	}
	return x / c.Rounds
}

// Costs returns the cost of each repetition of one period kind of a
// daemon run (idle, churn, offline, online, rebind): between the
// samples KIND-R-0 and KIND-R-1 for R = 1..reps, with an error for each
// repetition whose samples are missing or do not parse.
func (dr DaemonRun) Costs(kind string, reps int) ([]Cost, []error) {
	var out []Cost
	var errs []error
	for rep := 1; rep <= reps; rep++ {
		a, ok1 := dr.Cost[fmt.Sprintf("%s-%d-0", kind, rep)]
		b, ok2 := dr.Cost[fmt.Sprintf("%s-%d-1", kind, rep)]
		if !ok1 || !ok2 {
			errs = append(errs, fmt.Errorf("%s %s rep %d: no samples", dr.Name(), kind, rep))
			continue
		}
		c, err := CostBetween(a, b)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s rep %d: %w", dr.Name(), kind, rep, err))
			continue
		}
		out = append(out, c)
	}
	return out, errs
}

// Accounted compares the CPU time (schedstat) of a run from its first
// sample to its last with the sum over the given periods (kinds x
// reps, as Costs takes them): what the periods leave out is the work
// between them (for numairqd the metrics scrapes, and whatever they
// set off, such as a garbage collection). NaN where schedstat is
// missing.
func (dr DaemonRun) Accounted(kinds []string, reps int) (total, inPeriods float64) {
	var first, last CostSample
	n := 0
	for _, s := range dr.Cost {
		if n == 0 || s.UptimeS < first.UptimeS {
			first = s
		}
		if n == 0 || s.UptimeS > last.UptimeS {
			last = s
		}
		n++
	}
	if n < 2 {
		return math.NaN(), math.NaN()
	}
	if c, err := CostBetween(first, last); err == nil {
		total = c.RunS
	} else {
		total = math.NaN()
	}
	for _, k := range kinds {
		cs, errs := dr.Costs(k, reps)
		if len(errs) > 0 {
			return total, math.NaN()
		}
		for _, c := range cs {
			inPeriods += c.RunS
		}
	}
	return total, inPeriods
}

// PeakHWMKB is the highest VmHWM over every sample of the run (the
// process's peak RSS up to its last sample); 0 if none has it.
func (dr DaemonRun) PeakHWMKB() int64 {
	var peak int64
	for _, s := range dr.Cost {
		if v, err := StatusKB(s.Status, "VmHWM"); err == nil && v > peak {
			peak = v
		}
	}
	return peak
}

// FloorSummary is what `benchagent floor` prints as its last line when
// it stops: how many CPU uevents it handled (one round each), what it
// read and wrote in those rounds, and why it stopped.
type FloorSummary struct {
	IRQs        int    `json:"irqs"`      // device IRQs it watches, collected at start
	Rounds      int64  `json:"rounds"`    // cpu online/offline uevents, one round each
	Ignored     int64  `json:"ignored"`   // other uevents
	Reads       int64  `json:"reads"`     // files read in rounds (one read(2) each)
	Writes      int64  `json:"writes"`    // smp_affinity_list writes that succeeded
	WriteErrors int64  `json:"write_err"` // writes the kernel refused (the IRQ is not written again)
	Stop        string `json:"stop"`      // "signal" or "max"
}
