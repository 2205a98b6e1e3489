package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/load"
)

// procSample is one read of /proc/interrupts and /proc/stat.
type procSample struct {
	at      time.Time
	ints    inventory.Interrupts
	stat    []load.CPUStat
	statErr error // why /proc/stat was unreadable: no CPU times
}

// readProcSample reads procfs with the daemon's load sampler's readers.
func readProcSample(procfs string, at time.Time) (*procSample, error) {
	fsys := load.FS{Proc: procfs}
	ints, err := fsys.ReadInterrupts()
	if err != nil {
		return nil, err
	}
	s := &procSample{at: at, ints: ints}
	s.stat, s.statErr = fsys.ReadStat()
	return s, nil
}

// rates are what changed between two samples.
type rates struct {
	Seconds float64 `json:"seconds"`
	// CPUs are the online CPUs' interrupts per second (numbered IRQs
	// only) and percent of time in irq and softirq (null: unknown).
	CPUs  []cpuRate          `json:"cpus"`
	IRQs  map[string]float64 `json:"irqs"`            // per second, by number
	Error string             `json:"error,omitempty"` // why missing or partial
}

type cpuRate struct {
	CPU            int      `json:"cpu"`
	PerSecond      float64  `json:"irqs_per_second"`
	IRQTimePercent *float64 `json:"irq_softirq_percent"`
}

// since is the rates from prev to s. A count that went down (an IRQ
// freed and requested again) counts from zero.
func (s *procSample) since(prev *procSample) *rates {
	dt := s.at.Sub(prev.at).Seconds()
	r := &rates{Seconds: dt, CPUs: []cpuRate{}, IRQs: map[string]float64{}}
	if dt <= 0 {
		r.Error = "no time between samples"
		return r
	}
	old := make(map[int][]uint64, len(prev.ints.Rows))
	for _, row := range prev.ints.Rows {
		old[row.IRQ] = row.Counts
	}
	perCPU := map[int]float64{}
	for _, row := range s.ints.Rows {
		var total uint64
		before := old[row.IRQ]
		for _, cpu := range s.ints.CPUs {
			if cpu >= len(row.Counts) {
				continue
			}
			d := row.Counts[cpu]
			if cpu < len(before) && before[cpu] <= d {
				d -= before[cpu]
			}
			total += d
			perCPU[cpu] += float64(d)
		}
		r.IRQs[strconv.Itoa(row.IRQ)] = float64(total) / dt
	}
	times := map[int]float64{}
	switch {
	case s.statErr != nil:
		r.Error = fmt.Sprintf("no CPU times: %v", s.statErr)
	case prev.statErr == nil:
		was := map[int]load.CPUStat{}
		for _, c := range prev.stat {
			was[c.CPU] = c
		}
		for _, c := range s.stat {
			p, ok := was[c.CPU]
			if !ok || c.Total <= p.Total {
				continue
			}
			busy := int64(c.IRQ+c.SoftIRQ) - int64(p.IRQ+p.SoftIRQ)
			times[c.CPU] = 100 * float64(max(busy, 0)) / float64(c.Total-p.Total)
		}
	}
	for _, cpu := range s.ints.CPUs {
		cr := cpuRate{CPU: cpu, PerSecond: perCPU[cpu] / dt}
		if t, ok := times[cpu]; ok {
			cr.IRQTimePercent = &t
		}
		r.CPUs = append(r.CPUs, cr)
	}
	return r
}
