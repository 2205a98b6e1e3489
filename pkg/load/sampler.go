// Package load samples how much CPU time interrupts take, per CPU and per
// IRQ, so placement can weigh IRQs by load and not only count them.
//
// A Sampler shares each CPU's irq and softirq time (/proc/stat) over the
// IRQs that fired on it by their interrupts there (/proc/interrupts), as
// irqbalance does. Loads are exponentially weighted averages with their
// standard errors, so the planner does not move queues for noise.
package load

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/numairqd/numairqd/pkg/inventory"
)

// interruptCost is the CPU-seconds charged per interrupt when /proc/stat
// shows no interrupt time: 5 µs, a guess that only sets the scale.
const interruptCost = 5e-6

// accountingOffAfter is how many device interrupts one CPU takes, with
// no interrupt time on any CPU, before /proc/stat is taken as not
// accounting it.
const accountingOffAfter = 100_000

// Config tunes a Sampler.
type Config struct {
	HalfLife time.Duration // of the smoothed rates and loads, more than 0
	// Queues reads per-queue packet counters each sample; nil: none.
	Queues QueueReader
}

// Loads is one sample's smoothed loads, in CPU-seconds per second.
type Loads struct {
	Time      time.Time     // as passed to Sample
	Interval  time.Duration // since the previous sample; 0 for the first
	Ready     bool          // false for the first sample, which has no deltas
	Intervals int           // intervals folded into the averages so far
	// TimeAccounting says the loads share out time /proc/stat measures,
	// else IRQ loads are rates times a fixed cost.
	TimeAccounting bool
	CPUs           []CPULoad // the online CPUs, ascending
	IRQs           []IRQLoad // the rows of /proc/interrupts, by IRQ
	// Queues are the network queues with per-queue counters, by
	// interface and queue; QueuesErr is why some could not be read.
	Queues    []QueueLoad
	QueuesErr error
}

// CPULoad is one CPU's smoothed interrupt load.
type CPULoad struct {
	CPU  int
	Load float64 // irq+softirq time per second of the CPU's time (0..1)
	// Unattributed is Load from intervals without IRQs: it cannot move.
	Unattributed      float64
	UnattributedNoise float64 // standard error of Unattributed
	Ready             bool    // the CPU was online a whole interval
}

// IRQLoad is one IRQ's smoothed rate and load.
type IRQLoad struct {
	IRQ int
	// Chip, HWIRQ and Actions are the row's identity; Actions is shared
	// with the sampler, do not modify it.
	Chip    string
	HWIRQ   string
	Actions []string
	Rate    float64 // interrupts per second
	Load    float64 // share of the irq+softirq time of the CPUs it fired on
	Noise   float64 // standard error of Load
	CPU     int     // took most interrupts when it last fired; -1 before
	// Ready is set once the IRQ was seen, with the same identity, at
	// both ends of an interval.
	Ready bool
}

// IRQ returns the load of irq, false when the sample has no such IRQ.
func (l Loads) IRQ(irq int) (IRQLoad, bool) {
	i, ok := slices.BinarySearchFunc(l.IRQs, irq, func(q IRQLoad, n int) int { return cmp.Compare(q.IRQ, n) })
	if !ok {
		return IRQLoad{}, false
	}
	return l.IRQs[i], true
}

// Sampler turns successive reads of /proc/stat and /proc/interrupts into
// smoothed loads. IRQs and CPUs that leave are forgotten. It is not
// safe for concurrent use.
type Sampler struct {
	fs       FS
	halfLife time.Duration
	reader   QueueReader

	primed     bool
	intervals  int
	last       time.Time
	ints       inventory.Interrupts // the previous sample's, rows ascending by IRQ
	irqs       []irqHist            // per row of ints
	stat       []CPUStat            // the previous sample's
	cpus       []cpuHist            // by CPU id
	accounting bool

	// Scratch space reused across samples: by CPU id, and per row.
	inPrev, colOK, timeOK []bool
	sum                   []uint64 // interrupts counted on the CPU this interval
	dBusy, dAll           []uint64
	share                 []float64 // CPU time per interrupt on the CPU
	cols                  []int     // CPUs with a column in both samples
	rows                  []rowDelta
	spare                 []irqHist

	queues map[queueKey]queueHist
}

type irqHist struct {
	rate, load ewma
	cpu        int // IRQLoad.CPU, plus one: the zero value is -1
}

type cpuHist struct {
	online       bool // in the previous /proc/stat
	stat         CPUStat
	load, unattr ewma
	quiet        uint64 // device interrupts since any CPU's last interrupt time
}

// rowDelta is what pass one learnt of a row of /proc/interrupts.
type rowDelta struct {
	kind  rowKind
	prev  int    // index of the row in the previous sample
	total uint64 // interrupts this interval, when kind is rowCounted
	top   int    // the CPU that took most of them
}

type rowKind uint8

const (
	rowNew     rowKind = iota // no previous row with this identity
	rowSkipped                // a count went down: no delta this time
	rowCounted
)

// FS is the procfs root the sampler reads: "/proc" on a host.
type FS struct {
	Proc string
}

// NewSampler returns a Sampler of the procfs at fsys. It panics if
// cfg.HalfLife is not more than 0, as time.NewTicker does.
func NewSampler(fsys FS, cfg Config) *Sampler {
	if cfg.HalfLife <= 0 {
		panic(fmt.Sprintf("load: NewSampler with HalfLife %v (want more than 0)", cfg.HalfLife))
	}
	return &Sampler{fs: fsys, halfLife: cfg.HalfLife, reader: cfg.Queues}
}

func (s *Sampler) add(now time.Time, stat []CPUStat, ints inventory.Interrupts, qc QueueCounts) Loads {
	if !slices.IsSortedFunc(stat, byCPU) {
		slices.SortFunc(stat, byCPU)
	}
	if !slices.IsSortedFunc(ints.Rows, byIRQ) {
		slices.SortFunc(ints.Rows, byIRQ)
	}
	width := len(s.cpus)
	for _, st := range stat {
		width = max(width, st.CPU+1)
	}
	for _, c := range ints.CPUs {
		width = max(width, c+1)
	}
	s.grow(width)

	out := Loads{Time: now, Ready: s.primed}
	rows := s.rows[:0]
	if s.primed {
		out.Interval = now.Sub(s.last)
		s.intervals++
		out.Intervals = s.intervals
		rows = s.count(stat, ints, rows)
		s.decideAccounting(stat)
	} else {
		rows = append(rows, make([]rowDelta, len(ints.Rows))...) // rowNew
		s.accounting = slices.ContainsFunc(stat, func(st CPUStat) bool { return st.IRQ > 0 || st.SoftIRQ > 0 })
	}
	s.rows = rows

	dt := out.Interval.Seconds()
	w := weight(out.Interval, s.halfLife)
	out.CPUs = make([]CPULoad, len(stat))
	for i, st := range stat {
		out.CPUs[i] = s.cpuLoad(st, dt, w)
	}
	// A CPU that went offline starts afresh when it comes back.
	for _, old := range s.stat {
		if _, found := slices.BinarySearchFunc(stat, old.CPU, func(st CPUStat, c int) int { return cmp.Compare(st.CPU, c) }); !found {
			s.cpus[old.CPU] = cpuHist{}
		}
	}

	next := slices.Grow(s.spare[:0], len(ints.Rows))[:len(ints.Rows)]
	out.IRQs = make([]IRQLoad, len(ints.Rows))
	for i := range ints.Rows {
		r := &ints.Rows[i]
		rd := rows[i]
		var h irqHist
		if rd.kind != rowNew {
			h = s.irqs[rd.prev]
		}
		if rd.kind == rowCounted {
			rate := float64(rd.total) / dt
			load := rate * interruptCost
			if s.accounting {
				load = 0
				if rd.total > 0 {
					p := s.ints.Rows[rd.prev].Counts
					for _, c := range s.cols {
						if d := r.Counts[c] - p[c]; d != 0 {
							load += float64(d) * s.share[c]
						}
					}
				}
			}
			h.rate.add(rate, w)
			h.load.add(load, w)
			if rd.total > 0 {
				h.cpu = rd.top + 1
			}
		}
		next[i] = h
		out.IRQs[i] = IRQLoad{IRQ: r.IRQ, Chip: r.Chip, HWIRQ: r.HWIRQ, Actions: r.Actions,
			Rate: h.rate.v, Load: h.load.v, Noise: h.load.noise(), CPU: h.cpu - 1, Ready: h.rate.ok}
	}
	s.irqs, s.spare = next, s.irqs
	out.Queues, out.QueuesErr = s.addQueues(qc, dt, w), qc.Err
	s.ints, s.stat, s.last, s.primed = ints, stat, now, true
	out.TimeAccounting = s.accounting
	return out
}

// count is pass one over a primed sample: which CPUs have deltas, each
// CPU's stat deltas and interrupt count, and each row's kind and total.
func (s *Sampler) count(stat []CPUStat, ints inventory.Interrupts, rows []rowDelta) []rowDelta {
	clear(s.inPrev)
	for _, c := range s.ints.CPUs {
		s.inPrev[c] = true
	}
	s.cols = s.cols[:0]
	clear(s.colOK)
	for _, c := range ints.CPUs {
		if s.inPrev[c] {
			s.cols = append(s.cols, c)
			s.colOK[c] = true
		}
	}
	clear(s.timeOK)
	for _, st := range stat {
		h := &s.cpus[st.CPU]
		p := h.stat
		// A line at both ends, and counts that did not go down.
		if !h.online || st.IRQ < p.IRQ || st.SoftIRQ < p.SoftIRQ || st.Total < p.Total {
			continue
		}
		s.timeOK[st.CPU] = true
		s.dBusy[st.CPU] = st.IRQ - p.IRQ + st.SoftIRQ - p.SoftIRQ
		s.dAll[st.CPU] = st.Total - p.Total
	}
	for _, c := range s.cols {
		s.sum[c], s.share[c] = 0, 0
	}

	prev := s.ints.Rows
	j := 0
	for i := range ints.Rows {
		r := &ints.Rows[i]
		for j < len(prev) && prev[j].IRQ < r.IRQ {
			j++
		}
		if j == len(prev) || prev[j].IRQ != r.IRQ || !sameIdentity(&prev[j], r) {
			rows = append(rows, rowDelta{kind: rowNew})
			continue
		}
		// A count that went down or rose past 2^32-1 (a wrapped 32-bit
		// kstat_irqs, a descriptor requested anew): no delta this time.
		p := prev[j].Counts
		if slices.ContainsFunc(s.cols, func(c int) bool { return r.Counts[c] < p[c] || r.Counts[c]-p[c] > math.MaxUint32 }) {
			rows = append(rows, rowDelta{kind: rowSkipped, prev: j})
			continue
		}
		var total, most uint64
		top := -1
		for _, c := range s.cols {
			d := r.Counts[c] - p[c]
			s.sum[c] += d
			total += d
			if d > most {
				most, top = d, c
			}
		}
		rows = append(rows, rowDelta{kind: rowCounted, prev: j, total: total, top: top})
	}
	return rows
}

// decideAccounting updates whether /proc/stat measures interrupt time:
// yes as soon as any CPU's irq or softirq column rises, no once a CPU
// has taken accountingOffAfter device interrupts while neither rose.
func (s *Sampler) decideAccounting(stat []CPUStat) {
	if slices.ContainsFunc(stat, func(st CPUStat) bool { return s.timeOK[st.CPU] && s.dBusy[st.CPU] > 0 }) {
		s.accounting = true
		for _, st := range stat {
			s.cpus[st.CPU].quiet = 0
		}
		return
	}
	for _, c := range s.cols {
		h := &s.cpus[c]
		h.quiet += s.sum[c]
		if h.quiet >= accountingOffAfter {
			s.accounting = false
		}
	}
}

// cpuLoad folds the CPU's interval into its averages, sets the time per
// interrupt its IRQs get (share) and returns its load.
func (s *Sampler) cpuLoad(st CPUStat, dt, w float64) CPULoad {
	c := st.CPU
	h := &s.cpus[c]
	s.share[c] = 0
	measured := s.primed && s.timeOK[c] && s.colOK[c]
	switch {
	case !measured:
	case s.accounting:
		if s.dAll[c] == 0 {
			break // an interval shorter than a tick
		}
		frac := min(1, float64(s.dBusy[c])/float64(s.dAll[c]))
		h.load.add(frac, w)
		if s.sum[c] == 0 {
			h.unattr.add(frac, w)
		} else {
			h.unattr.add(0, w)
			s.share[c] = frac / float64(s.sum[c])
		}
	default:
		h.load.add(float64(s.sum[c])/dt*interruptCost, w)
		h.unattr.add(0, w)
	}
	h.online, h.stat = true, st
	return CPULoad{CPU: c, Load: h.load.v, Unattributed: h.unattr.v, UnattributedNoise: h.unattr.noise(), Ready: h.load.ok}
}

// sameIdentity says whether two rows are the same request.
func sameIdentity(a, b *inventory.InterruptLine) bool {
	return a.Chip == b.Chip && a.HWIRQ == b.HWIRQ && slices.Equal(a.Actions, b.Actions)
}

// grow makes the per-CPU slices hold CPU ids below width.
func (s *Sampler) grow(width int) {
	if width <= len(s.cpus) {
		return
	}
	n := width - len(s.cpus)
	s.cpus = append(s.cpus, make([]cpuHist, n)...)
	s.inPrev = append(s.inPrev, make([]bool, n)...)
	s.colOK = append(s.colOK, make([]bool, n)...)
	s.timeOK = append(s.timeOK, make([]bool, n)...)
	s.sum = append(s.sum, make([]uint64, n)...)
	s.dBusy = append(s.dBusy, make([]uint64, n)...)
	s.dAll = append(s.dAll, make([]uint64, n)...)
	s.share = append(s.share, make([]float64, n)...)
}

func byCPU(a, b CPUStat) int { return cmp.Compare(a.CPU, b.CPU) }

func byIRQ(a, b inventory.InterruptLine) int { return cmp.Compare(a.IRQ, b.IRQ) }

// weight is the share of a new value over an interval dt in an average
// whose old values lose half their weight every halfLife:
// 1 - 2^(-dt/halfLife), so a late or missed sample does not bend it.
func weight(dt, halfLife time.Duration) float64 {
	if dt <= 0 {
		return 0
	}
	// -expm1(-x ln 2) keeps the digits of a small weight.
	return -math.Expm1(-float64(dt) / float64(halfLife) * math.Ln2)
}

// ewma is an exponentially weighted moving average and variance whose
// first value is taken as is. vr is the values' weighted variance
// (Finch 2009, eq. 143), from 0, so spread divides out kept, the weight
// the start still has; sq sums the squared weights.
type ewma struct {
	v, vr, kept, sq float64
	ok              bool
}

func (e *ewma) add(x, w float64) {
	if !e.ok {
		e.v, e.vr, e.kept, e.sq, e.ok = x, 0, 1, 1, true
		return
	}
	d := x - e.v
	e.v += w * d
	e.vr = (1 - w) * (e.vr + w*d*d)
	e.kept *= 1 - w
	e.sq = (1-w)*(1-w)*e.sq + w*w
}

// spread is the standard deviation of one value; 0 after one value.
func (e *ewma) spread() float64 {
	if e.kept >= 1 {
		return 0
	}
	return math.Sqrt(e.vr / (1 - e.kept))
}

// noise is the standard error of the average.
func (e *ewma) noise() float64 { return e.spread() * math.Sqrt(e.sq) }
