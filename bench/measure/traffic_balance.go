package measure

import (
	"bufio"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// QueueStats is one reading of every bench NIC's per-queue rx packet
// counters (virtio_net's `ethtool -S` rx_queue_N_packets), as the
// traffic script's qstats prints it (ParseQueueStats).
type QueueStats struct {
	UptimeS float64        `json:"uptime_s"`
	Devices []DeviceQueues `json:"devices"`
}

// DeviceQueues is one NIC's counters in a QueueStats.
type DeviceQueues struct {
	PCI   string `json:"pci"`
	Iface string `json:"iface"`
	// RxPackets maps an rx queue index to its rx_queue_N_packets.
	RxPackets map[int]uint64 `json:"rx_packets"`
}

var rxQueuePacketsRe = regexp.MustCompile(`^rx_queue_(\d+)_packets$`)

// ParseQueueStats parses the traffic script's qstats output:
//
//	=== uptime 123.45
//	=== 0000:41:00.0 eth0
//	     rx_queue_0_packets: 1234
//
// Lines of a device section other than rx_queue_N_packets are skipped.
func ParseQueueStats(text string) (QueueStats, error) {
	var qs QueueStats
	var dev *DeviceQueues
	sc := bufio.NewScanner(strings.NewReader(text))
	n, haveUptime := 0, false
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if head, ok := strings.CutPrefix(line, "=== "); ok {
			f := strings.Fields(head)
			switch {
			case len(f) == 2 && f[0] == "uptime":
				v, err := strconv.ParseFloat(f[1], 64)
				if err != nil {
					return QueueStats{}, fmt.Errorf("queue stats line %d %q: %w", n, line, err)
				}
				qs.UptimeS, haveUptime = v, true
			case len(f) == 2:
				qs.Devices = append(qs.Devices, DeviceQueues{PCI: f[0], Iface: f[1], RxPackets: map[int]uint64{}})
				dev = &qs.Devices[len(qs.Devices)-1]
			default:
				return QueueStats{}, fmt.Errorf("queue stats line %d %q: want \"=== uptime S\" or \"=== PCI IFACE\"", n, line)
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		m := rxQueuePacketsRe.FindStringSubmatch(strings.TrimSpace(k))
		if !ok || m == nil {
			continue
		}
		if dev == nil {
			return QueueStats{}, fmt.Errorf("queue stats line %d %q: counter before any device header", n, line)
		}
		q, _ := strconv.Atoi(m[1])
		c, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return QueueStats{}, fmt.Errorf("queue stats line %d %q: %w", n, line, err)
		}
		dev.RxPackets[q] = c
	}
	if err := sc.Err(); err != nil {
		return QueueStats{}, err
	}
	if !haveUptime {
		return QueueStats{}, fmt.Errorf("queue stats: no uptime line in %.200q", text)
	}
	return qs, nil
}

// MetricValue returns the value of one series in Prometheus text
// exposition (the lines of numairqd's /metrics), named exactly as the
// exposition prints it: `numairqd_balance_moves_total{reason="load"}`,
// or a bare name for a series without labels.
func MetricValue(text, series string) (float64, bool) {
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, series)
		if !ok || !strings.HasPrefix(rest, " ") {
			continue
		}
		f := strings.Fields(rest)
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, false
		}
		return v, true
	}
	return 0, false
}

// LoadMoves is numairqd's counter of queue moves by load balancing.
const LoadMoves = `numairqd_balance_moves_total{reason="load"}`

// QueueLoad is one rx queue's share of a window's softirq time.
type QueueLoad struct {
	PCI     string
	Queue   int
	Packets uint64  // received in the window
	IRQs    uint64  // its rx IRQ's interrupts in the window
	Load    float64 // in %soft of one CPU (see Balance)
	// FitLoad is the load by the cost fit (BalanceFigures.FitIRQ).
	FitLoad float64
	CPU     int // where most of its interrupts fired; -1 if none did
	// Ring is the online CPUs at CPU's distance from the NIC's node: the
	// hop `balance: load` keeps a queue in (config.BalanceLoad). It is
	// nil, any CPU, when the NIC has at least as many queues as online
	// CPUs (numairqd's auto policy is linear then, with one ring) or no
	// node.
	Ring []int
}

// BalanceFigures are one state's figures against the best whole-queue
// assignment (Bound).
type BalanceFigures struct {
	Seconds float64 // the window
	// CPUs are the online CPUs' %soft, with their distance from the
	// first device's node.
	CPUs   []CPULoad
	Queues []QueueLoad
	// Source is where the queue loads come from: "packets" (per-queue
	// rx packets: guestcheck queue-packets, from qstats-get or ethtool
	// -S) or "interrupts" (the rx IRQs' counts, when the state has no
	// queue stats).
	Source string
	// Unmovable is the %soft every CPU carries that no queue explains:
	// the mean %soft of the CPUs that served under 1% of the packets,
	// estimated from IdleCPUs of them; 0 (ignored) when IdleCPUs is 0.
	Unmovable float64
	IdleCPUs  int
	// MaxOverMean is the measured busiest CPU's %soft over the mean of
	// the online CPUs; Bound the least a whole-queue assignment of the
	// same queue loads can give (BoundExact: proven); Ratio their
	// quotient (1 is the best placement of whole queues).
	MaxOverMean, Bound, Ratio float64
	BoundExact                bool
	// FitIRQ and FitPkt are the least-squares cost of one interrupt and
	// one packet in %soft·s (soft_c ≈ FitIRQ·interrupts_c/s +
	// FitPkt·packets_c/s over the CPUs that served queues, both at least
	// 0): under TCG a lightly loaded queue takes an interrupt for every
	// few packets, a busy one polls many per interrupt, so per-packet
	// shares overstate busy queues. FitBound and FitRatio are Bound and
	// Ratio with the queue loads split by that cost instead of by
	// packets (same total).
	FitIRQ, FitPkt     float64
	FitBound, FitRatio float64
	// MeanSoft is the mean %soft of the online CPUs: Bound*MeanSoft is
	// the bound's busiest CPU, in %soft.
	MeanSoft float64
	// MeanDist is the interrupt-weighted mean NUMA distance of every
	// queue IRQ of the devices from its own device's node (NaN without
	// nodes); RxPPS all their rx packets per second.
	MeanDist, RxPPS float64
	// QueueDist is the mean over the busy rx queues (guestinfo.BusyShare
	// of the packets) of the distance from their NIC's node to the CPU
	// that took most of their interrupts: where the placement put them,
	// without MeanDist's weighting by interrupt rates (NaN without
	// nodes).
	QueueDist float64
	// Moves is the increase of LoadMoves over the window, MovesTotal its
	// value at the window's end (since numairqd started); NaN without
	// the metrics.
	Moves, MovesTotal float64
}

// idleShare is the share of a window's packets under which a CPU
// counts as serving no queue, for the unmovable estimate.
const idleShare = 0.01

// Balance computes a state's figures for the devices at pcis (their rx
// queues, all together: a guest with two NICs shares its CPUs between
// them). A queue's load is its share of the window's rx packets times
// the online CPUs' softirq time that the queues explain (all of it
// less Unmovable on every CPU), so the queue loads and Unmovable add up
// to the measured %soft. The per-packet cost is taken to be the same
// for every queue and CPU.
func Balance(st TrafficState, pcis []string) (BalanceFigures, error) {
	w, err := guestinfo.LoadSeries(st.Samples)
	if err != nil {
		return BalanceFigures{}, err
	}
	t := TopoOf(st.Before)
	var devs []Device
	for _, pci := range pcis {
		i := slices.IndexFunc(Devices(st.Before), func(d Device) bool { return d.PCI == pci })
		if i < 0 {
			return BalanceFigures{}, fmt.Errorf("state %s: no device %s", st.Name, pci)
		}
		devs = append(devs, Devices(st.Before)[i])
	}
	irqs := map[int]guestinfo.IRQWindow{}
	for _, q := range w.IRQs {
		irqs[q.Number] = q
	}
	f := BalanceFigures{Seconds: w.Seconds, MeanDist: math.NaN(), QueueDist: math.NaN(), Moves: math.NaN(), MovesTotal: math.NaN(), Source: "interrupts", RxPPS: w.RxPPS}
	before, after := st.QueuesBefore, st.QueuesAfter
	if before != nil && after != nil && after.UptimeS > before.UptimeS {
		f.Source = "packets"
	}
	packets := func(pci string, q int, irq int) uint64 {
		if f.Source == "interrupts" {
			return irqs[irq].Total
		}
		var a, b uint64
		for _, d := range before.Devices {
			if d.PCI == pci {
				a = d.RxPackets[q]
			}
		}
		for _, d := range after.Devices {
			if d.PCI == pci {
				b = d.RxPackets[q]
			}
		}
		return since(a, b)
	}
	// Packets served per CPU: a queue's packets split as its interrupts.
	served, servedIRQs := map[int]float64{}, map[int]float64{}
	var totalPkts float64
	var distSum, distN float64
	for _, d := range devs {
		for _, q := range d.Queues {
			iw := irqs[q.IRQ.Number]
			if d.Node >= 0 {
				for c, n := range iw.Counts {
					distSum += float64(t.CPUDist(d.Node, c)) * float64(n)
					distN += float64(n)
				}
			}
			if !strings.HasPrefix(q.Name, "input.") {
				continue
			}
			ql := QueueLoad{PCI: d.PCI, Queue: q.Queue, Packets: packets(d.PCI, q.Queue, q.IRQ.Number), IRQs: iw.Total, CPU: -1}
			var top uint64
			for c, n := range iw.Counts {
				if n > top || n == top && n > 0 && c < ql.CPU {
					ql.CPU, top = c, n
				}
				if iw.Total > 0 {
					served[c] += float64(ql.Packets) * float64(n) / float64(iw.Total)
				}
				servedIRQs[c] += float64(n)
			}
			totalPkts += float64(ql.Packets)
			f.Queues = append(f.Queues, ql)
		}
	}
	if distN > 0 {
		f.MeanDist = distSum / distN
	}
	for i, q := range f.Queues {
		d := devs[slices.IndexFunc(devs, func(d Device) bool { return d.PCI == q.PCI })]
		n := 0
		for _, dq := range d.Queues {
			if strings.HasPrefix(dq.Name, "input.") {
				n++
			}
		}
		if d.Node < 0 || q.CPU < 0 || n >= len(t.Online.CPUs()) {
			continue
		}
		for _, c := range t.Online.CPUs() {
			if t.CPUDist(d.Node, c) == t.CPUDist(d.Node, q.CPU) {
				f.Queues[i].Ring = append(f.Queues[i].Ring, c)
			}
		}
	}
	nodeOf := map[string]int{}
	for _, d := range devs {
		nodeOf[d.PCI] = d.Node
	}
	var qd, qn float64
	for _, q := range f.Queues {
		if node := nodeOf[q.PCI]; node >= 0 && q.CPU >= 0 && float64(q.Packets) >= guestinfo.BusyShare*totalPkts {
			qd += float64(t.CPUDist(node, q.CPU))
			qn++
		}
	}
	if qn > 0 {
		f.QueueDist = qd / qn
	}
	if f.Source == "packets" {
		f.RxPPS = totalPkts / (after.UptimeS - before.UptimeS)
	}
	var soft float64
	var idleSoft float64
	for _, c := range w.CPUs {
		if !t.Online.Contains(c.CPU) {
			continue
		}
		l := CPULoad{CPU: c.CPU, Dist: -1, SoftPct: c.SoftPct}
		if len(devs) > 0 && devs[0].Node >= 0 {
			l.Dist = t.CPUDist(devs[0].Node, c.CPU)
		}
		f.CPUs = append(f.CPUs, l)
		soft += c.SoftPct
		if served[c.CPU] < idleShare*totalPkts {
			f.IdleCPUs++
			idleSoft += c.SoftPct
		}
	}
	n := float64(len(f.CPUs))
	if n == 0 {
		return f, fmt.Errorf("state %s: no online CPU in the window", st.Name)
	}
	if f.IdleCPUs > 0 && f.IdleCPUs < len(f.CPUs) {
		f.Unmovable = idleSoft / float64(f.IdleCPUs)
	} else {
		f.IdleCPUs = 0
	}
	f.MeanSoft = soft / n
	explained := max(0, soft-n*f.Unmovable)
	loads := make([]float64, len(f.Queues))
	for i := range f.Queues {
		if totalPkts > 0 {
			f.Queues[i].Load = explained * float64(f.Queues[i].Packets) / totalPkts
		}
		loads[i] = f.Queues[i].Load
	}
	unmovable := make([]float64, len(f.CPUs))
	for i := range unmovable {
		unmovable[i] = f.Unmovable
	}
	f.Bound, f.BoundExact = Bound(loads, unmovable)
	// The cost fit, over the CPUs that served packets (the others add
	// nothing to either sum).
	var softs, irqRates, pktRates []float64
	for _, c := range f.CPUs {
		if served[c.CPU] > 0 {
			softs = append(softs, c.SoftPct)
			irqRates = append(irqRates, servedIRQs[c.CPU]/f.Seconds)
			pktRates = append(pktRates, served[c.CPU]/f.Seconds)
		}
	}
	f.FitIRQ, f.FitPkt = fitCost(softs, irqRates, pktRates)
	var fitSum float64
	for _, q := range f.Queues {
		fitSum += f.FitIRQ*float64(q.IRQs)/f.Seconds + f.FitPkt*float64(q.Packets)/f.Seconds
	}
	fitLoads := make([]float64, len(f.Queues))
	for i, q := range f.Queues {
		if fitSum > 0 {
			f.Queues[i].FitLoad = explained * (f.FitIRQ*float64(q.IRQs)/f.Seconds + f.FitPkt*float64(q.Packets)/f.Seconds) / fitSum
		}
		fitLoads[i] = f.Queues[i].FitLoad
	}
	f.FitBound, _ = Bound(fitLoads, unmovable)
	if mx, mean := w.SoftPct(t.Online); mean > 0 {
		f.MaxOverMean = mx / mean
	}
	f.Ratio = f.MaxOverMean / f.Bound
	f.FitRatio = f.MaxOverMean / f.FitBound
	if v1, ok := MetricValue(st.MetricsAfter, LoadMoves); ok {
		f.MovesTotal = v1
		if v0, ok := MetricValue(st.MetricsBefore, LoadMoves); ok {
			f.Moves = v1 - v0
		}
	}
	return f, nil
}

// fitCost is the least-squares (a, b) >= 0 of y ≈ a·x1 + b·x2, no
// intercept; (0, 0) when nothing can be fitted.
func fitCost(y, x1, x2 []float64) (a, b float64) {
	var s11, s12, s22, s1y, s2y float64
	for i := range y {
		s11 += x1[i] * x1[i]
		s12 += x1[i] * x2[i]
		s22 += x2[i] * x2[i]
		s1y += x1[i] * y[i]
		s2y += x2[i] * y[i]
	}
	if det := s11*s22 - s12*s12; det > 1e-9*s11*s22 {
		a, b = (s1y*s22-s2y*s12)/det, (s2y*s11-s1y*s12)/det
		if a >= 0 && b >= 0 {
			return a, b
		}
	}
	// On the boundary: the better of a alone and b alone.
	var aOnly, bOnly float64
	if s11 > 0 {
		aOnly = max(0, s1y/s11)
	}
	if s22 > 0 {
		bOnly = max(0, s2y/s22)
	}
	res := func(a, b float64) float64 {
		var r float64
		for i := range y {
			d := y[i] - a*x1[i] - b*x2[i]
			r += d * d
		}
		return r
	}
	if res(aOnly, 0) <= res(0, bOnly) {
		return aOnly, 0
	}
	return 0, bOnly
}

// since is the growth of a cumulative counter, 0 if it went backwards
// (a device re-probed between the readings).
func since(a, b uint64) uint64 {
	if b < a {
		return 0
	}
	return b - a
}
