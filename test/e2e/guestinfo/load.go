package guestinfo

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
)

// QueueIRQPattern matches the action names of virtio and NVMe queue
// IRQs (virtio0-input.3, virtio0-output.3, nvme0q0 admin included), the
// IRQs `guestcheck sample` reports by default.
const QueueIRQPattern = `^(virtio\d+-(input|output)\.\d+|nvme\d+q\d+)$`

// LoadSample is one sample of the guest's cumulative interrupt,
// softirq and receive counters, as `guestcheck sample` prints it (one
// JSON line each). A single sample says little; LoadBetween turns two
// of them into per-CPU loads and rates.
type LoadSample struct {
	UptimeS float64 `json:"uptime_s"`
	// IRQCPUs are the CPU ids of /proc/interrupts' count columns. The
	// file has a column per online CPU only, so with a CPU offline the
	// columns are not 0..n-1.
	IRQCPUs []int       `json:"irq_cpus"`
	IRQs    []IRQCounts `json:"irqs"`
	// CPUs has one entry per cpuN line of /proc/stat (the online CPUs).
	CPUs []CPUTicks `json:"cpus"`
	// Net is the sampled interface's counters; nil when none was asked.
	Net *NetCounts `json:"net,omitempty"`
	// Errors lists what could not be read; the rest of the sample holds.
	Errors []string `json:"errors,omitempty"`
}

// IRQCounts is one /proc/interrupts row with the IRQ's affinities.
type IRQCounts struct {
	Number  int      `json:"irq"`
	Actions []string `json:"actions"`
	// Counts holds one count per LoadSample.IRQCPUs column.
	Counts    []uint64 `json:"counts"`
	Affinity  string   `json:"smp_affinity_list"`
	Effective string   `json:"effective_affinity_list"`
}

// CPUTicks is one cpuN line of /proc/stat, in USER_HZ ticks, and the
// CPU's NET_RX count from /proc/softirqs (softirq runs, not time).
type CPUTicks struct {
	CPU     int    `json:"cpu"`
	User    uint64 `json:"user"`
	Nice    uint64 `json:"nice"`
	System  uint64 `json:"system"`
	Idle    uint64 `json:"idle"`
	IOWait  uint64 `json:"iowait"`
	IRQ     uint64 `json:"irq"`
	SoftIRQ uint64 `json:"softirq"`
	Steal   uint64 `json:"steal"`
	NetRX   uint64 `json:"net_rx"`
}

// ticks lists the time fields in /proc/stat's order.
func (c CPUTicks) ticks() [8]uint64 {
	return [8]uint64{c.User, c.Nice, c.System, c.Idle, c.IOWait, c.IRQ, c.SoftIRQ, c.Steal}
}

// Total is all of the CPU's time. /proc/stat's guest and guest_nice
// columns are left out: the kernel counts them in user and nice too.
func (c CPUTicks) Total() uint64 {
	var t uint64
	for _, v := range c.ticks() {
		t += v
	}
	return t
}

// NetCounts is /sys/class/net/<Iface>/statistics.
type NetCounts struct {
	Iface     string `json:"iface"`
	RxPackets uint64 `json:"rx_packets"`
	RxDropped uint64 `json:"rx_dropped"`
	RxMissed  uint64 `json:"rx_missed_errors"`
	RxFIFO    uint64 `json:"rx_fifo_errors"`
}

// ReadLoad takes a sample: the IRQs with an action name that satisfies
// match, every online CPU, and the counters of iface ("" for none).
func (fs FS) ReadLoad(match func(string) bool, iface string) LoadSample {
	var st State // collects reader's errors
	r := reader{fs: fs, s: &st}
	var ls LoadSample
	if f := strings.Fields(r.str("proc/uptime")); len(f) > 0 {
		ls.UptimeS, _ = strconv.ParseFloat(f[0], 64)
	}
	ls.IRQCPUs, ls.IRQs = r.loadIRQs(match)
	ls.CPUs = r.cpuTicks()
	if iface != "" {
		ls.Net = r.netCounts(iface)
	}
	ls.Errors = st.Errors
	return ls
}

func (r reader) loadIRQs(match func(string) bool) ([]int, []IRQCounts) {
	path := r.path("proc/interrupts")
	b, err := os.ReadFile(path)
	if err != nil {
		r.fail(err)
		return nil, nil
	}
	ints, err := inventory.ParseInterrupts(bytes.NewReader(b))
	if err != nil {
		r.fail(fmt.Errorf("read %s: %w", path, err))
		return nil, nil
	}
	var out []IRQCounts
	for _, row := range ints.Rows {
		if !slices.ContainsFunc(row.Actions, match) {
			continue
		}
		irq := IRQCounts{Number: row.IRQ, Actions: row.Actions}
		for _, c := range ints.CPUs {
			irq.Counts = append(irq.Counts, row.Counts[c])
		}
		dir := fmt.Sprintf("proc/irq/%d/", row.IRQ)
		irq.Affinity = r.optional(dir + "smp_affinity_list")
		irq.Effective = r.optional(dir + "effective_affinity_list")
		out = append(out, irq)
	}
	return ints.CPUs, out
}

// cpuTicks reads the cpuN lines of /proc/stat (online CPUs only) and
// joins the NET_RX row of /proc/softirqs (a column per possible CPU).
func (r reader) cpuTicks() []CPUTicks {
	var out []CPUTicks
	path := r.path("proc/stat")
	for line := range strings.Lines(r.str("proc/stat")) {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		c, err := parseStatLine(f)
		if err != nil {
			r.fail(fmt.Errorf("read %s: %q: %w", path, strings.TrimSpace(line), err))
			continue
		}
		out = append(out, c)
	}
	netRX, err := parseNetRX(r.str("proc/softirqs"))
	if err != nil {
		r.fail(fmt.Errorf("read %s: %w", r.path("proc/softirqs"), err))
		return out
	}
	for i := range out {
		n, ok := netRX[out[i].CPU]
		if !ok {
			r.fail(fmt.Errorf("read %s: no column for online CPU %d", r.path("proc/softirqs"), out[i].CPU))
		}
		out[i].NetRX = n
	}
	return out
}

// parseStatLine parses the fields of "cpuN user nice system idle iowait
// irq softirq steal [guest guest_nice]".
func parseStatLine(f []string) (CPUTicks, error) {
	cpu, err := strconv.Atoi(strings.TrimPrefix(f[0], "cpu"))
	if err != nil {
		return CPUTicks{}, fmt.Errorf("%q is not cpuN", f[0])
	}
	if len(f) < 9 {
		return CPUTicks{}, fmt.Errorf("%d fields, want at least 8 after %s", len(f)-1, f[0])
	}
	var v [8]uint64
	for i := range v {
		if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
			return CPUTicks{}, err
		}
	}
	return CPUTicks{CPU: cpu, User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]}, nil
}

// parseNetRX returns /proc/softirqs' NET_RX count per CPU id.
func parseNetRX(text string) (map[int]uint64, error) {
	var cpus []int
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if cpus == nil {
			for _, h := range f {
				c, err := strconv.Atoi(strings.TrimPrefix(h, "CPU"))
				if err != nil || !strings.HasPrefix(h, "CPU") {
					return nil, fmt.Errorf("header token %q is not CPUn", h)
				}
				cpus = append(cpus, c)
			}
			continue
		}
		if f[0] != "NET_RX:" {
			continue
		}
		if len(f)-1 != len(cpus) {
			return nil, fmt.Errorf("NET_RX has %d counts for %d CPU columns", len(f)-1, len(cpus))
		}
		out := make(map[int]uint64, len(cpus))
		for i, c := range cpus {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("NET_RX count %q for CPU%d: %w", f[i+1], c, err)
			}
			out[c] = n
		}
		return out, nil
	}
	return nil, errors.New("no NET_RX line")
}

func (r reader) netCounts(iface string) *NetCounts {
	dir := "sys/class/net/" + iface + "/statistics/"
	num := func(name string) uint64 {
		s := r.str(dir + name)
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil && s != "" {
			r.fail(fmt.Errorf("read %s: %q: %w", r.path(dir+name), s, err))
		}
		return n
	}
	return &NetCounts{
		Iface:     iface,
		RxPackets: num("rx_packets"),
		RxDropped: num("rx_dropped"),
		RxMissed:  num("rx_missed_errors"),
		RxFIFO:    num("rx_fifo_errors"),
	}
}

// ParseLoadSamples decodes `guestcheck sample` output: one LoadSample
// per line; blank lines are skipped. An error names the line.
func ParseLoadSamples(r io.Reader) ([]LoadSample, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var out []LoadSample
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var s LoadSample
		if err := json.Unmarshal(line, &s); err != nil {
			return nil, fmt.Errorf("load sample line %d %.80q: %w", n, line, err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("load sample line %d: %w", n+1, err)
	}
	return out, nil
}

// LoadWindow is what happened between two samples.
type LoadWindow struct {
	Seconds float64 `json:"seconds"`
	// CPUs are the CPUs in both samples' /proc/stat, ascending: a CPU
	// that was offline at either end is left out.
	CPUs []CPUWindow `json:"cpus"`
	// IRQs are the IRQs in both samples with the same actions.
	IRQs []IRQWindow `json:"irqs"`
	// RxPPS and DropsPS are the interface's received packets and its
	// rx_dropped + rx_missed_errors + rx_fifo_errors per second; 0 when
	// a sample has no Net.
	RxPPS   float64 `json:"rx_pps"`
	DropsPS float64 `json:"drops_ps"`
}

// CPUWindow is one CPU's share of time and its NET_RX softirqs.
type CPUWindow struct {
	CPU int `json:"cpu"`
	// SoftPct and IRQPct are softirq and hardirq ticks over all the
	// CPU's ticks, in percent (0 when no tick passed).
	SoftPct float64 `json:"soft_pct"`
	IRQPct  float64 `json:"irq_pct"`
	NetRX   uint64  `json:"net_rx"`
}

// IRQWindow is where one IRQ's interrupts fired.
type IRQWindow struct {
	Number  int      `json:"irq"`
	Actions []string `json:"actions"`
	// Counts maps a CPU id to its interrupts in the window, for the CPUs
	// with a /proc/interrupts column in both samples.
	Counts map[int]uint64 `json:"counts"`
	Total  uint64         `json:"total"`
	// Affinity and Effective are the lists at the end of the window.
	Affinity  string `json:"smp_affinity_list"`
	Effective string `json:"effective_affinity_list"`
}

// since is the growth of a cumulative counter, 0 if it went backwards
// (an IRQ freed and allocated again, /proc/stat's iowait that may
// decrease on an idle CPU).
func since(a, b uint64) uint64 {
	if b < a {
		return 0
	}
	return b - a
}

// LoadBetween computes the window from sample a to the later sample b.
func LoadBetween(a, b LoadSample) (LoadWindow, error) {
	w := LoadWindow{Seconds: b.UptimeS - a.UptimeS}
	if w.Seconds <= 0 {
		return LoadWindow{}, fmt.Errorf("load sample at uptime %.3fs is not after the one at %.3fs", b.UptimeS, a.UptimeS)
	}
	for _, s := range []LoadSample{a, b} {
		for _, irq := range s.IRQs {
			if len(irq.Counts) != len(s.IRQCPUs) {
				return LoadWindow{}, fmt.Errorf("load sample at uptime %.3fs: IRQ %d has %d counts for %d CPU columns", s.UptimeS, irq.Number, len(irq.Counts), len(s.IRQCPUs))
			}
		}
	}
	before := map[int]CPUTicks{}
	for _, c := range a.CPUs {
		before[c.CPU] = c
	}
	for _, c := range b.CPUs {
		p, ok := before[c.CPU]
		if !ok {
			continue
		}
		var total uint64
		pt, ct := p.ticks(), c.ticks()
		for i := range ct {
			total += since(pt[i], ct[i])
		}
		cw := CPUWindow{CPU: c.CPU, NetRX: since(p.NetRX, c.NetRX)}
		if total > 0 {
			cw.SoftPct = float64(since(p.SoftIRQ, c.SoftIRQ)) / float64(total) * 100
			cw.IRQPct = float64(since(p.IRQ, c.IRQ)) / float64(total) * 100
		}
		w.CPUs = append(w.CPUs, cw)
	}
	slices.SortFunc(w.CPUs, func(x, y CPUWindow) int { return x.CPU - y.CPU })

	prev := map[int]IRQCounts{}
	for _, irq := range a.IRQs {
		prev[irq.Number] = irq
	}
	col := map[int]int{} // CPU id -> column in a
	for i, c := range a.IRQCPUs {
		col[c] = i
	}
	for _, irq := range b.IRQs {
		p, ok := prev[irq.Number]
		if !ok || !slices.Equal(p.Actions, irq.Actions) {
			continue
		}
		iw := IRQWindow{Number: irq.Number, Actions: irq.Actions, Counts: map[int]uint64{},
			Affinity: irq.Affinity, Effective: irq.Effective}
		for i, c := range b.IRQCPUs {
			j, ok := col[c]
			if !ok {
				continue
			}
			d := since(p.Counts[j], irq.Counts[i])
			iw.Counts[c] = d
			iw.Total += d
		}
		w.IRQs = append(w.IRQs, iw)
	}

	if a.Net != nil && b.Net != nil {
		w.RxPPS = float64(since(a.Net.RxPackets, b.Net.RxPackets)) / w.Seconds
		drops := func(n *NetCounts) uint64 { return n.RxDropped + n.RxMissed + n.RxFIFO }
		w.DropsPS = float64(since(drops(a.Net), drops(b.Net))) / w.Seconds
	}
	return w, nil
}

// LoadSeries is the window from the first sample to the last.
func LoadSeries(samples []LoadSample) (LoadWindow, error) {
	if len(samples) < 2 {
		return LoadWindow{}, fmt.Errorf("%d load samples, want at least 2 for a window", len(samples))
	}
	return LoadBetween(samples[0], samples[len(samples)-1])
}

// Share is the fraction (0..1) of the IRQ's interrupts in the window
// that fired on cpus; 0 when it had none (check Total to skip idle IRQs).
func (w IRQWindow) Share(cpus cpumask.Mask) float64 {
	if w.Total == 0 {
		return 0
	}
	var on uint64
	for c, n := range w.Counts {
		if cpus.Contains(c) {
			on += n
		}
	}
	return float64(on) / float64(w.Total)
}

// SoftPct is the largest and the mean per-CPU SoftPct over the CPUs of
// the window that are in cpus; 0, 0 when none is.
func (w LoadWindow) SoftPct(cpus cpumask.Mask) (maxPct, meanPct float64) {
	var n int
	for _, c := range w.CPUs {
		if !cpus.Contains(c.CPU) {
			continue
		}
		n++
		maxPct = max(maxPct, c.SoftPct)
		meanPct += c.SoftPct
	}
	if n == 0 {
		return 0, 0
	}
	return maxPct, meanPct / float64(n)
}

// BusyShare is the least share of a window's rx queue interrupts that
// makes one rx queue busy: the tap's flow hash gives every enabled
// queue some of the lab's 64 flows, so a queue under 2% carries almost
// nothing.
const BusyShare = 0.02

// Busy returns the IRQs of w that rx selects (a device's rx queue IRQs)
// and that took at least BusyShare of their interrupts together.
func (w LoadWindow) Busy(rx func(IRQWindow) bool) []IRQWindow {
	var total uint64
	for _, q := range w.IRQs {
		if rx(q) {
			total += q.Total
		}
	}
	var out []IRQWindow
	for _, q := range w.IRQs {
		if rx(q) && total > 0 && float64(q.Total) >= BusyShare*float64(total) {
			out = append(out, q)
		}
	}
	return out
}
