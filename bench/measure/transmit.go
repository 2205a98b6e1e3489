package measure

import (
	"fmt"
	"slices"

	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// TransmitRun is the transmit case (issue 27): one boot of the 4-node
// guest in which the same pinned UDP senders (`guestcheck send`) run
// in each state of the placement and of XPS.
type TransmitRun struct {
	Title string `json:"title"`
	PCI   string `json:"pci"`
	// Rate and SecondsPerCPU are one sender's, in the runs from one CPU
	// at a time; AllRate and AllSeconds the run from every online CPU,
	// each sending AllRate / CPUs.
	Rate          int             `json:"rate"`
	SecondsPerCPU float64         `json:"seconds_per_cpu"`
	AllRate       int             `json:"all_rate"`
	AllSeconds    float64         `json:"all_seconds"`
	States        []TransmitState `json:"states"`
}

// TransmitState is one state: driver (no daemon), irqbalance, or
// numairqd with `xps: follow` or `xps: leave`.
type TransmitState struct {
	Name string `json:"name"`
	// State is taken after the senders (x86 moves an MSI IRQ at its
	// next interrupt: before, effective affinities can be stale).
	State guestinfo.State `json:"state"`
	// PerCPU are the runs from one online CPU at a time; All the run
	// from all of them at once.
	PerCPU []guestinfo.TxRun `json:"per_cpu"`
	All    guestinfo.TxRun   `json:"all"`
}

// TransmitFigures are a state's figures.
type TransmitFigures struct {
	// Aligned of Queues tx queues have their completion IRQ on a CPU of
	// their xps_cpus; Uncovered online CPUs are in no queue's mask.
	Aligned, Queues, Uncovered int
	// MeanDistance is the NUMA distance from the sending CPU to the CPU
	// that took each completion, averaged over the completions of the
	// one-CPU runs; Completions is how many there were.
	MeanDistance float64
	Completions  uint64
	// Local is the share of those completions on the sending CPU.
	Local float64
	// Soft is each online CPU's %soft in the all-CPU run, by CPU id;
	// SoftMax and SoftMean their largest and mean.
	Soft              []guestinfo.CPUWindow
	SoftMax, SoftMean float64
	// SentPS is what the all-CPU run sent per second, errors the sendto
	// calls that failed (a full queue).
	SentPS float64
	Errors uint64
}

// Figures computes st's figures; an error means a run cannot be read.
func (st TransmitState) Figures(pci string) (TransmitFigures, error) {
	var f TransmitFigures
	rep := st.State.XPS(pci)
	f.Aligned, f.Queues, f.Uncovered = rep.Aligned(), len(rep.Queues), len(rep.Uncovered)
	var weighted float64
	var local uint64
	for _, run := range st.PerCPU {
		if len(run.CPUs) != 1 {
			return f, fmt.Errorf("%s: a one-CPU run sent from %v", st.Name, run.CPUs)
		}
		from := run.CPUs[0]
		perCPU, _, err := run.Completions()
		if err != nil {
			return f, fmt.Errorf("%s: cpu %d: %w", st.Name, from, err)
		}
		for c, n := range perCPU {
			d := st.State.Distance(from, c)
			if d < 0 {
				return f, fmt.Errorf("%s: no NUMA distance from cpu %d to cpu %d", st.Name, from, c)
			}
			weighted += float64(d) * float64(n)
			f.Completions += n
			if c == from {
				local += n
			}
		}
	}
	if f.Completions > 0 {
		f.MeanDistance = weighted / float64(f.Completions)
		f.Local = float64(local) / float64(f.Completions)
	}
	w, err := guestinfo.LoadBetween(st.All.Before, st.All.After)
	if err != nil {
		return f, fmt.Errorf("%s: all-CPU run: %w", st.Name, err)
	}
	f.Soft = w.CPUs
	for _, c := range w.CPUs {
		f.SoftMax = max(f.SoftMax, c.SoftPct)
		f.SoftMean += c.SoftPct
	}
	if len(w.CPUs) > 0 {
		f.SoftMean /= float64(len(w.CPUs))
	}
	if st.All.ElapsedS > 0 {
		f.SentPS = float64(st.All.TotalSent()) / st.All.ElapsedS
	}
	for _, e := range st.All.Errors {
		f.Errors += e
	}
	slices.SortFunc(f.Soft, func(a, b guestinfo.CPUWindow) int { return a.CPU - b.CPU })
	return f, nil
}
