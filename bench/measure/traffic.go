package measure

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// TrafficRun is one guest receiving the same traffic in several states
// of its IRQ placement, one after the other: the driver's own,
// irqbalance running, numairqd with `balance: count` ("count"; older
// runs call it "numairqd"), numairqd with `balance: load` ("load").
// Every state starts from the driver's placement.
type TrafficRun struct {
	Name    string `json:"name"`
	Title   string `json:"title"`
	PCI     string `json:"pci"`     // the first NIC's, NICs[0].PCI
	Enabled int    `json:"enabled"` // rx queues the driver has enabled
	Flows   int    `json:"flows"`   // the first NIC's
	Rate    int    `json:"rate"`    // the first NIC's offered frames/s
	// NICs are every NIC that received traffic, the first as above.
	NICs []TrafficNIC `json:"nics,omitempty"`
	// Skew says in words how the flows are uneven ("" for even flows).
	Skew string `json:"skew,omitempty"`
	// Steady marks the stability run: one long window in which only
	// the load balancer's moves are counted.
	Steady bool `json:"steady,omitempty"`
	// WarmupS is how long each state ran under traffic before its
	// window started (irqbalance rebalances every 10 s); a state's own
	// WarmupS overrides it.
	WarmupS float64        `json:"warmup_s"`
	States  []TrafficState `json:"states"`
}

// TrafficNIC is the traffic one NIC received in every state.
type TrafficNIC struct {
	PCI     string `json:"pci"`
	Flows   int    `json:"flows"`
	Rate    int    `json:"rate"`              // offered frames/s
	Weights string `json:"weights,omitempty"` // trafficgen -weights
}

// PCIs lists the run's NICs, or its one PCI for older runs.
func (r TrafficRun) PCIs() []string {
	if len(r.NICs) == 0 {
		return []string{r.PCI}
	}
	var out []string
	for _, n := range r.NICs {
		out = append(out, n.PCI)
	}
	return out
}

// TrafficState is one state's measurement window.
type TrafficState struct {
	Name string `json:"name"` // "driver", "irqbalance", "count", "load"
	// WarmupS is how long this state ran under traffic before its
	// window (0: the run's WarmupS).
	WarmupS float64 `json:"warmup_s,omitempty"`
	// Before and After are the guest's state at the ends of the window.
	Before  guestinfo.State        `json:"before"`
	After   guestinfo.State        `json:"after"`
	Samples []guestinfo.LoadSample `json:"samples"`
	// Generator is trafficgen's summary for this state's traffic (the
	// first NIC's); Generators has one per NIC.
	Generator  map[string]any   `json:"generator"`
	Generators []map[string]any `json:"generators,omitempty"`
	// QueuesBefore and QueuesAfter are the NICs' per-queue rx packets
	// just before and just after the window's samples.
	QueuesBefore *QueueStats `json:"queues_before,omitempty"`
	QueuesAfter  *QueueStats `json:"queues_after,omitempty"`
	// MetricsBefore and MetricsAfter are numairqd's numairqd_balance_*
	// and numairqd_cpu_irq_load lines at the window's ends ("" for
	// other daemons).
	MetricsBefore string `json:"metrics_before,omitempty"`
	MetricsAfter  string `json:"metrics_after,omitempty"`
	// MoveLog is numairqd's "load balance moved queues" log lines.
	MoveLog string `json:"move_log,omitempty"`
	// Daemon is what numairqd's /plan said of the balanced NICs' queues
	// at the window's end (load states only).
	Daemon []DaemonQueues `json:"daemon_queues,omitempty"`
}

// CPULoad is one CPU's part of a window.
type CPULoad struct {
	CPU     int
	Dist    int // NUMA distance from the device's node
	SoftPct float64
	// BusyIRQs counts the busy rx queue IRQs whose interrupts fired
	// mostly here: "IRQs per vCPU" of the MANA table.
	BusyIRQs int
}

// TrafficFigures is what one state's window shows.
type TrafficFigures struct {
	Seconds float64
	CPUs    []CPULoad
	// MaxOverMean is the largest per-vCPU %soft over the mean of every
	// online vCPU (1 is a perfectly even spread of softirq time).
	MaxOverMean    float64
	RxPPS, DropsPS float64
	BusyRx         int // busy rx queue IRQs (guestinfo.LoadWindow.Busy)
	// ByDist is the share (0..1) of the device's queue interrupts that
	// fired on CPUs at each NUMA distance from its node, and SoftByDist
	// the share of all softirq time; MeanDist is the interrupt-weighted
	// mean distance (NaN without a node).
	ByDist, SoftByDist map[int]float64
	MeanDist           float64
}

// Traffic computes a state's figures for the virtio-net at pci.
func Traffic(st TrafficState, pci string) (TrafficFigures, error) {
	w, err := guestinfo.LoadSeries(st.Samples)
	if err != nil {
		return TrafficFigures{}, err
	}
	var dev *Device
	for _, d := range Devices(st.Before) {
		if d.PCI == pci {
			dev = &d
			break
		}
	}
	if dev == nil {
		return TrafficFigures{}, fmt.Errorf("state %s: no device %s", st.Name, pci)
	}
	queueIRQ, rxIRQ := map[int]bool{}, map[int]bool{}
	for _, q := range dev.Queues {
		queueIRQ[q.IRQ.Number] = true
		if strings.HasPrefix(q.Name, "input.") {
			rxIRQ[q.IRQ.Number] = true
		}
	}
	t := TopoOf(st.Before)
	f := TrafficFigures{Seconds: w.Seconds, RxPPS: w.RxPPS, DropsPS: w.DropsPS,
		ByDist: map[int]float64{}, SoftByDist: map[int]float64{}, MeanDist: math.NaN()}
	byCPU := map[int]*CPULoad{}
	for _, c := range w.CPUs {
		l := CPULoad{CPU: c.CPU, Dist: -1, SoftPct: c.SoftPct}
		if dev.Node >= 0 {
			l.Dist = t.CPUDist(dev.Node, c.CPU)
		}
		f.CPUs = append(f.CPUs, l)
	}
	for i := range f.CPUs {
		byCPU[f.CPUs[i].CPU] = &f.CPUs[i]
	}
	var queueTotal uint64
	var distSum float64
	for _, q := range w.IRQs {
		if !queueIRQ[q.Number] {
			continue
		}
		for c, n := range q.Counts {
			queueTotal += n
			if dev.Node >= 0 {
				d := t.CPUDist(dev.Node, c)
				f.ByDist[d] += float64(n)
				distSum += float64(d) * float64(n)
			}
		}
	}
	busy := w.Busy(func(q guestinfo.IRQWindow) bool { return rxIRQ[q.Number] })
	f.BusyRx = len(busy)
	for _, q := range busy {
		top, topN := -1, uint64(0)
		for c, n := range q.Counts {
			if n > topN || n == topN && c < top {
				top, topN = c, n
			}
		}
		if l := byCPU[top]; l != nil {
			l.BusyIRQs++
		}
	}
	if queueTotal > 0 {
		for d := range f.ByDist {
			f.ByDist[d] /= float64(queueTotal)
		}
		if dev.Node >= 0 {
			f.MeanDist = distSum / float64(queueTotal)
		}
	}
	var softTotal float64
	for _, l := range f.CPUs {
		softTotal += l.SoftPct
		if dev.Node >= 0 {
			f.SoftByDist[l.Dist] += l.SoftPct
		}
	}
	if softTotal > 0 {
		for d := range f.SoftByDist {
			f.SoftByDist[d] /= softTotal
		}
	}
	if mx, mean := w.SoftPct(t.Online); mean > 0 {
		f.MaxOverMean = mx / mean
	}
	sort.Slice(f.CPUs, func(i, j int) bool { return f.CPUs[i].CPU < f.CPUs[j].CPU })
	return f, nil
}

// Distances lists the keys of m in ascending order.
func Distances(m map[int]float64) []int {
	out := make([]int, 0, len(m))
	for d := range m {
		out = append(out, d)
	}
	sort.Ints(out)
	return out
}
