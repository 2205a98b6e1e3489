package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/numairqd/numairqd/pkg/policy"
)

// writeNAPIThreadsText shows each NAPI kthread of d with its CPUs
// before and after, as the IRQ table shows affinities.
func writeNAPIThreadsText(w io.Writer, p *policy.Plan, d policy.Device) {
	if d.NAPIError != "" {
		fmt.Fprintf(w, "  napi_threads %s: threads not found: %s\n", d.NAPIMode, d.NAPIError)
	}
	if len(d.NAPIThreads) == 0 {
		return
	}
	fmt.Fprintf(w, "  napi_threads %s\n", d.NAPIMode)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  NAPI THREAD\tPID\tQUEUE\tIRQ\tCPUS CURRENT -> PLANNED\tREASON\n")
	for _, t := range d.NAPIThreads {
		irq, queue := "-", "-"
		if t.IRQ >= 0 {
			irq = strconv.Itoa(t.IRQ)
		}
		if t.Queue >= 0 {
			queue = fmt.Sprintf("%s-%d", t.Kind, t.Queue)
		}
		planned := t.Planned.String()
		switch {
		case t.LeftAlone():
			planned = "(left alone)"
		case !p.NAPIThreadDiffers(t):
			planned = "= " + planned
		}
		fmt.Fprintf(tw, "  %s %s\t%d\t%s\t%s\t%s -> %s\t%s\n", t.Interface, t.Comm, t.PID, queue, irq, orDash(t.Current.String()), planned, t.Reason)
	}
	tw.Flush()
}
