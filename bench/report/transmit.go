package main

import (
	"fmt"
	"strings"

	"github.com/numairqd/numairqd/bench/measure"
)

// txRowNames are the transmit table's row labels by state.
var txRowNames = map[string]string{
	"driver":     "driver (no daemon)",
	"irqbalance": "irqbalance",
	"follow":     "numairqd, `xps: follow`",
	"leave":      "numairqd, `xps: leave`",
}

// transmit writes the transmit section (issue 27): per state, how many
// tx queues have their completion IRQ on a CPU of their xps_cpus, the
// NUMA distance from each sending CPU to the CPU its completions fired
// on, and per-vCPU %soft with every CPU sending.
func (w *writer) transmit(tr *measure.TransmitRun) {
	if tr == nil || len(tr.States) == 0 {
		return
	}
	w.p("## Transmit: XPS and completion IRQs\n")
	w.p("Guest: %s. One boot; each state starts from the driver's placement and XPS (every IRQ's `smp_affinity_list` and every `queues/tx-K/xps_cpus` written back), then the daemon runs until its queue IRQ map has been quiet (irqbalance 11 s, numairqd 3 s). `guestcheck send` sends UDP with unconnected `sendto` from a thread pinned to one CPU, so XPS picks the tx queue per datagram from that CPU: first from each online CPU alone (%d datagrams/s for %.0f s), then from all at once (%d datagrams/s in all, %.0f s). The frames go to an address in 198.18.0.0/15 on the tap side, which has no address.\n",
		tr.Title, tr.Rate, tr.SecondsPerCPU, tr.AllRate, tr.AllSeconds)
	w.p("- **tx queues aligned**: tx queues whose completion IRQ (`virtioN-output.K`) has its `effective_affinity_list` inside the queue's `xps_cpus`, of all tx queues; **uncovered**: online CPUs in no tx queue's `xps_cpus`.")
	w.p("- **mean distance**: over the completion interrupts of the one-CPU runs, the NUMA distance from the sending CPU to the CPU that took the interrupt (10: the same node); **local**: their share on the sending CPU itself.")
	w.p("- **%%soft**: each vCPU's softirq share of its time over the all-CPU run (`/proc/stat`), max and mean over the vCPUs, then per vCPU.\n")
	w.p("| state | tx queues aligned | uncovered CPUs | mean distance | local | completions | %%soft max | %%soft mean | sent/s (all) | per-vCPU %%soft |")
	w.p("|---|---|---|---|---|---|---|---|---|---|")
	for _, st := range tr.States {
		name := txRowNames[st.Name]
		if name == "" {
			name = st.Name
		}
		f, err := st.Figures(tr.PCI)
		if err != nil {
			w.p("| %s | error: %v | | | | | | | | |", name, err)
			continue
		}
		var soft []string
		for _, c := range f.Soft {
			soft = append(soft, fmt.Sprintf("%d:%.1f", c.CPU, c.SoftPct))
		}
		w.p("| %s | %d of %d | %d | %.2f | %.0f%% | %d | %.1f | %.1f | %.0f | %s |", name, f.Aligned, f.Queues, f.Uncovered,
			f.MeanDistance, 100*f.Local, f.Completions, f.SoftMax, f.SoftMean, f.SentPS, strings.Join(soft, " "))
	}
	w.p("")
}
