package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/numairqd/numairqd/bench/measure"
)

// costKinds are the periods of the per-event cost table: the three
// watched events and a churn block.
var costKinds = []string{"offline", "online", "rebind", "churn"}

// Targets of issue 14 that the summary checks.
const (
	targetRSSKB       = 10 << 10 // peak RSS at most 10 MiB
	targetReactS      = 0.1      // reaction medians below 0.1 s
	targetVsIrqb      = 10.0     // churn CPU at most 10x irqbalance's ...
	targetVsFloor     = 2.0      // ... or within 2x of the floor
	targetChurnCycles = 20
)

// eventFigures are one daemon's figures for one kind of period, one
// value per repetition.
type eventFigures struct {
	run, ticks, sys, rounds, writes []float64
	sysPerRound, runPerRound        []float64
	applied                         []float64
	ioErr                           error
	errs                            []error
}

func figuresOf(dr measure.DaemonRun, kind string, reps int) eventFigures {
	cs, errs := dr.Costs(kind, reps)
	f := eventFigures{errs: errs}
	for _, c := range cs {
		rounds, writes := c.Rounds, c.Writes
		if dr.Floor != nil && reps > 0 {
			// The floor counts its rounds over the whole run, all of
			// them in the churn blocks, which are alike.
			rounds, writes = float64(dr.Floor.Rounds)/float64(reps), float64(dr.Floor.Writes)/float64(reps)
		}
		per := func(x float64) float64 {
			if math.IsNaN(rounds) || rounds <= 0 {
				return math.NaN()
			}
			return x / rounds
		}
		f.run = append(f.run, c.RunS)
		f.ticks = append(f.ticks, c.CPUS)
		f.sys = append(f.sys, c.Syscalls)
		f.rounds = append(f.rounds, rounds)
		f.writes = append(f.writes, writes)
		f.sysPerRound = append(f.sysPerRound, per(c.Syscalls))
		f.runPerRound = append(f.runPerRound, per(c.RunS))
		f.applied = append(f.applied, c.AppliedS)
		if c.IOErr != nil {
			f.ioErr = c.IOErr
		}
	}
	return f
}

// cpu is the median CPU time per period and where it comes from: the
// threads' schedstat (ns) when every repetition has it, else utime+stime.
func (f eventFigures) cpu() (float64, string) {
	if s := measure.Summarize(f.run); s.N > 0 && s.N == len(f.run) {
		return s.Median, "schedstat"
	}
	return measure.Summarize(f.ticks).Median, "utime+stime"
}

func msText(s float64) string {
	if s >= 1 {
		return fmt.Sprintf("%.2f s", s)
	}
	return fmt.Sprintf("%.1f ms", s*1000)
}

func oneDecimal(x float64) string { return fmt.Sprintf("%.1f", x) }

func kindTitle(kind string, cycles int) string {
	if kind == "churn" {
		return fmt.Sprintf("churn block (%d offline/online cycles of CPU 5)", cycles)
	}
	return eventTitle[kind]
}

// reactionText is the time to the daemon's own placement after events
// of one kind, as in the reaction table.
func reactionText(dr measure.DaemonRun, kind string) (string, measure.Summary) {
	var own []float64
	rs := reactions(dr)[kind]
	for _, r := range rs {
		if r.OwnS >= 0 {
			own = append(own, r.OwnS)
		}
	}
	s := measure.Summarize(own)
	t := summ(s)
	if len(own) < len(rs) {
		t += fmt.Sprintf("; %d of %d never", len(rs)-len(own), len(rs))
	}
	return t, s
}

func (w *writer) eventCost(runs []measure.DaemonRun) {
	if len(runs) == 0 {
		return
	}
	reps := w.meta.Reps
	w.p("## Cost per event\n")
	w.p("The same boots as [Reaction time](#reaction-time) and [Cost](#cost), and for the floor a boot of its own. Around each watched event (from just before `benchagent watch` does the write until it stops polling, i.e. the daemon's reaction plus the 2 s (numairqd) or 3 s (irqbalance) quiet time it waits, up to the %.0f s window) and around each churn block, the guest sampled the daemon's process: utime+stime (`/proc/PID/stat`), every thread's time on a CPU (first field of `/proc/PID/task/*/schedstat`, in ns; threads that exit take theirs with them), `syscr` and `syscw` of `/proc/PID/io`, `VmHWM` and `VmRSS` (`/proc/PID/status`). Median (min–max) over the %d repetitions.\n", w.meta.WindowS, reps)
	w.p("- **syscalls** is `syscr`+`syscw`: the read and write family (read, pread64, readv, write, writev, ...), counted whether they succeed or not, for every thread. It does not count open, close, fstat, recvmsg, epoll or futex calls: a lower bound on the system calls, the same one for every daemon. \"missing\" means the guest kernel has no `/proc/PID/io` (CONFIG_TASK_IO_ACCOUNTING), not zero.")
	w.p("- **rounds** (numairqd): the increase of `numairqd_rounds_total` (all triggers) on its metrics endpoint (`listen: 127.0.0.1:9768` in these boots; loopback up; busybox `wget`). The scrape that opens a period runs before the `/proc` reads and the one that closes it after them, so serving the scrapes is not counted in the period. **IRQ writes** likewise from `numairqd_affinity_writes_total{result=\"ok\"}`. irqbalance has no such counter. The floor's rounds and writes are its own count (one round per CPU uevent), over its churn blocks.")
	w.p("- **event to applied** (numairqd): its own mean time from the first event of a burst to the end of the apply it caused, from `numairqd_event_to_applied_seconds` (sum and count) over the period: the daemon's share of the reaction, without the event's own write or the poll that saw the result; – when no burst ended in the period or the run's scrapes did not include it.")
	w.p("- **CPU time** is the schedstat figure (the utime+stime ticks are 10 ms apart and are given for comparison with [Cost](#cost)); per round divides it by the rounds.")
	w.p("- **floor**: `benchagent floor`, a minimal Go loop doing, per CPU online/offline uevent and nothing more, the physical floor of a round after a CPU event: it re-reads `/sys/devices/system/cpu/online`, `/sys/devices/system/node/online` and each online node's `cpulist` and `distance`, reads the `smp_affinity_list` of each IRQ numairqd plans and writes those that differ from numairqd's own plan for the online CPUs (`numairqd plan --format json` for both online sets of the churn, made before the floor starts): numairqd's writes without its planning. Every file is opened, read or written with one call, and closed; no coalescing. It is the yardstick for numairqd's churn cost: what any daemon that answers every CPU event must at least spend here. It gets no reaction events.\n")
	w.p("| event | daemon | CPU time per event | utime+stime (s) | syscalls per event | rounds per event | syscalls per round | CPU time per round | IRQ writes per event | reaction (own placement) | event to applied |")
	w.p("|---|---|---|---|---|---|---|---|---|---|---|")
	figs := map[string]map[string]eventFigures{}
	reacts := map[string]map[string]measure.Summary{} // by daemon's Name, then kind
	for _, kind := range costKinds {
		figs[kind] = map[string]eventFigures{}
		for _, dr := range runs {
			if dr.Daemon == "floor" && kind != "churn" {
				continue
			}
			f := figuresOf(dr, kind, reps)
			figs[kind][dr.Name()] = f
			if len(f.ticks) == 0 {
				w.p("| %s | %s | error: %s | | | | | | | | |", kindTitle(kind, w.meta.ChurnCycles), dr.Name(), errText(f.errs))
				continue
			}
			sys := rangeText(f.sys, count)
			if measure.Summarize(f.sys).N == 0 && f.ioErr != nil {
				sys = "missing: " + cut(f.ioErr.Error(), 80)
			}
			rounds, sysRound, runRound, writes := "n/a", "n/a", "n/a", "n/a"
			if dr.Daemon != "irqbalance" {
				rounds, sysRound, runRound, writes = rangeText(f.rounds, oneDecimal), rangeText(f.sysPerRound, oneDecimal), rangeText(f.runPerRound, msText), rangeText(f.writes, oneDecimal)
			}
			react, applied := "n/a", "n/a"
			if dr.Daemon == "numairqd" {
				applied = rangeText(f.applied, msText)
			}
			if kind != "churn" {
				var s measure.Summary
				react, s = reactionText(dr, kind)
				if reacts[dr.Name()] == nil {
					reacts[dr.Name()] = map[string]measure.Summary{}
				}
				reacts[dr.Name()][kind] = s
			}
			w.p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", kindTitle(kind, w.meta.ChurnCycles), dr.Name(),
				rangeText(f.run, msText), rangeText(f.ticks, secs), sys, rounds, sysRound, runRound, writes, react, applied)
		}
	}
	w.p("")
	for _, dr := range runs {
		if fs := dr.Floor; fs != nil && fs.Rounds > 0 {
			w.p("The floor watched %d device IRQs and handled %d CPU uevents, one round each (%d other uevents it only received); per round it read %.1f files and wrote %.1f affinities; writes the kernel refused: %d (a managed IRQ, which it then leaves alone). It stopped by %s.\n",
				fs.IRQs, fs.Rounds, fs.Ignored, float64(fs.Reads)/float64(fs.Rounds), float64(fs.Writes)/float64(fs.Rounds), fs.WriteErrors, fs.Stop)
		}
	}
	w.accounted(runs)
	w.peakRSS(runs)
	w.eventSummary(figs, reacts["numairqd"])
	w.baselineRatios(runs, figs["churn"], reacts)
}

// accounted shows how much of each daemon's CPU time the periods hold.
func (w *writer) accounted(runs []measure.DaemonRun) {
	w.p("What the periods leave out: CPU time (schedstat) from the first sample of the boot to the last, and the part of it inside the sampled periods (idle, churn and the three events; the floor: churn). Between the periods run the settles, `numairqd plan` (another process) and, for numairqd, the two metrics scrapes of each period, whose cost is thereby kept out of the periods; but a garbage collection that numairqd's rounds made due can start in a scrape's allocations and then falls between the periods too, so numairqd's figures per period can miss up to one collection each.\n")
	w.p("| daemon | first to last sample | in the periods | between them |")
	w.p("|---|---|---|---|")
	for _, dr := range runs {
		kinds := []string{"idle", "churn", "offline", "online", "rebind"}
		if dr.Daemon == "floor" {
			kinds = []string{"churn"}
		}
		total, in := dr.Accounted(kinds, w.meta.Reps)
		between := "–"
		if !math.IsNaN(total) && !math.IsNaN(in) {
			between = msText(total - in)
		}
		w.p("| %s | %s | %s | %s |", dr.Name(), msOrDash(total), msOrDash(in), between)
	}
	w.p("")
}

func msOrDash(s float64) string {
	if math.IsNaN(s) {
		return "–"
	}
	return msText(s)
}

// errText puts errors on one line, for a table cell.
func errText(errs []error) string {
	var parts []string
	for _, err := range errs {
		parts = append(parts, err.Error())
	}
	return cut(strings.Join(parts, "; "), 300)
}

func countOrMissing(x float64) string {
	if math.IsNaN(x) {
		return "missing"
	}
	return fmt.Sprintf("%.0f", x)
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// peakRSS is the highest VmHWM of each daemon's samples.
func (w *writer) peakRSS(runs []measure.DaemonRun) {
	w.p("Peak RSS: the highest `VmHWM` (the kernel's high-water mark of the resident set) over all samples of the boot, which for irqbalance and numairqd ends after the last event; `VmRSS` at the last sample.\n")
	w.p("| daemon | peak RSS (VmHWM) | VmRSS at the last sample |")
	w.p("|---|---|---|")
	peaks := map[string]int64{}
	for _, dr := range runs {
		peak := dr.PeakHWMKB()
		peaks[dr.Name()] = peak
		var last measure.CostSample
		for _, s := range dr.Cost {
			if s.UptimeS > last.UptimeS {
				last = s
			}
		}
		rss := "–"
		if v, err := measure.StatusKB(last.Status, "VmRSS"); err == nil {
			rss = fmt.Sprintf("%d KiB", v)
		}
		w.p("| %s | %d KiB (%.1f MiB) | %s |", dr.Name(), peak, float64(peak)/1024, rss)
	}
	w.p("")
	a, okA := peaks["irqbalance"]
	b, okB := peaks["numairqd"]
	var parts []string
	for _, d := range []string{"irqbalance", "numairqd", "floor"} {
		if v, ok := peaks[d]; ok {
			parts = append(parts, fmt.Sprintf("%s %d KiB", d, v))
		}
	}
	if len(parts) > 0 {
		line := "peak RSS (highest VmHWM of the run): " + strings.Join(parts, ", ")
		if okA && okB && a > 0 {
			line += fmt.Sprintf(" (numairqd/irqbalance %.2fx)", float64(b)/float64(a))
			w.compare("peak RSS (VmHWM)", float64(a), float64(b), true, "%.0f KiB")
		}
		w.ratios = append(w.ratios, line)
	}
	if okB && b > 0 {
		w.targets = append(w.targets, fmt.Sprintf("peak RSS at most 10 MiB: numairqd %d KiB (%.1f MiB) — %s", b, float64(b)/1024, verdict(b <= targetRSSKB)))
	}
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// eventSummary adds the churn ratios against irqbalance and the floor,
// and the targets, to the summary.
func (w *writer) eventSummary(figs map[string]map[string]eventFigures, reacts map[string]measure.Summary) {
	churn := figs["churn"]
	irqb, okI := churn["irqbalance"]
	numa, okN := churn["numairqd"]
	fl, okF := churn["floor"]
	if okN && (okI || okF) {
		nc, src := numa.cpu()
		var parts []string
		rI, rF := math.NaN(), math.NaN()
		if okI {
			c, _ := irqb.cpu()
			parts, rI = append(parts, "irqbalance "+msText(c)), nc/c
		}
		parts = append(parts, "numairqd "+msText(nc))
		if okF {
			c, _ := fl.cpu()
			parts, rF = append(parts, "floor "+msText(c)), nc/c
		}
		line := fmt.Sprintf("CPU time per churn block of %d cycles (%s): %s", w.meta.ChurnCycles, src, strings.Join(parts, ", "))
		if !math.IsNaN(rI) {
			line += fmt.Sprintf("; numairqd/irqbalance %.1fx", rI)
		}
		if !math.IsNaN(rF) {
			line += fmt.Sprintf("; numairqd/floor %.1fx", rF)
		}
		w.ratios = append(w.ratios, line)
		var sys []string
		for _, d := range []string{"irqbalance", "numairqd", "floor"} {
			if f, ok := churn[d]; ok {
				t := fmt.Sprintf("%s %s", d, countOrMissing(measure.Summarize(f.sys).Median))
				if s := measure.Summarize(f.sysPerRound); s.N > 0 {
					t += fmt.Sprintf(" (%.1f per round)", s.Median)
				}
				sys = append(sys, t)
			}
		}
		w.ratios = append(w.ratios, "syscalls (syscr+syscw) per churn block: "+strings.Join(sys, ", "))
		w.churnTarget(irqb, okI, fl, okF, rI, rF)
	}
	var rs []string
	met := true
	for _, kind := range []string{"offline", "online", "rebind"} {
		s, ok := reacts[kind]
		if !ok || s.N == 0 {
			rs = append(rs, kind+" never")
			met = false
			continue
		}
		rs = append(rs, fmt.Sprintf("%s %.2f s", kind, s.Median))
		met = met && s.Median < targetReactS
	}
	if len(reacts) > 0 {
		w.targets = append(w.targets, fmt.Sprintf("numairqd's reaction medians to CPU offline, online and re-bind each below 0.1 s: %s — %s", strings.Join(rs, ", "), verdict(met)))
	}
}

// churnTarget says which yardstick the churn CPU target uses and why:
// irqbalance's cost is one only if it did at least the floor's work per
// block (its syscalls, or its CPU time if those are missing).
func (w *writer) churnTarget(irqb eventFigures, okI bool, fl eventFigures, okF bool, rI, rF float64) {
	per := ""
	if w.meta.ChurnCycles != targetChurnCycles {
		per = fmt.Sprintf(" (blocks of %d cycles in this run; the target is stated per %d: the ratio does not depend on it)", w.meta.ChurnCycles, targetChurnCycles)
	}
	if !okF {
		if okI {
			w.targets = append(w.targets, fmt.Sprintf("CPU time per churn block at most 10x irqbalance's%s: %.1fx — %s (no floor in this run, so irqbalance is the only yardstick)", per, rI, verdict(rI <= targetVsIrqb)))
		}
		return
	}
	floorTarget := fmt.Sprintf("within 2x of the floor%s: numairqd/floor %.1fx — %s", per, rF, verdict(rF <= targetVsFloor))
	if !okI {
		w.targets = append(w.targets, "CPU time per churn block "+floorTarget)
		return
	}
	is, fs := measure.Summarize(irqb.sys).Median, measure.Summarize(fl.sys).Median
	what := "syscalls"
	if math.IsNaN(is) || math.IsNaN(fs) {
		// No /proc/PID/io: CPU time in ms instead.
		is, _ = irqb.cpu()
		fs, _ = fl.cpu()
		is, fs, what = is*1000, fs*1000, "CPU ms"
	}
	if is < fs {
		w.targets = append(w.targets, fmt.Sprintf("CPU time per churn block: the yardstick is the floor, not irqbalance — irqbalance did less than the floor's minimal work in the blocks (%s per block: irqbalance %s, floor %s): 1.9.2 does not act on CPU hotplug events, it rescans on its 10 s tick, so it has no per-event round to compare with (numairqd/irqbalance %.1fx, for reference). Target %s", what, countOrMissing(is), countOrMissing(fs), rI, floorTarget))
		return
	}
	w.targets = append(w.targets, fmt.Sprintf("CPU time per churn block at most 10x irqbalance's%s: %.1fx — %s (irqbalance did at least the floor's work in the blocks: %s per block %s against the floor's %s; numairqd/floor %.1fx)", per, rI, verdict(rI <= targetVsIrqb), what, countOrMissing(is), countOrMissing(fs), rF))
}
