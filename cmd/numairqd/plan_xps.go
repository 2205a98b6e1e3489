package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/numairqd/numairqd/pkg/policy"
)

// writeTxQueuesText shows each tx queue of d with its XPS CPUs before
// and after, as the IRQ table shows affinities.
func writeTxQueuesText(w io.Writer, p *policy.Plan, d policy.Device) {
	if d.XPSError != "" {
		fmt.Fprintf(w, "  xps %s: tx queues not listed (left alone): %s\n", d.XPS, d.XPSError)
	}
	if len(d.TxQueues) == 0 {
		return
	}
	fmt.Fprintf(w, "  xps %s\n", d.XPS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  TX QUEUE\tIRQ\tXPS CURRENT -> PLANNED\tREASON\n")
	for _, t := range d.TxQueues {
		irq := "-"
		if t.IRQ >= 0 {
			irq = fmt.Sprint(t.IRQ)
		}
		planned := t.Planned.String()
		switch {
		case t.LeftAlone():
			planned = "(left alone)"
		case !p.XPSDiffers(t):
			planned = "= " + planned
		}
		fmt.Fprintf(tw, "  %s tx-%d\t%s\t%s -> %s\t%s\n", t.Interface, t.Queue, irq, orDash(t.Current.String()), planned, t.Reason)
	}
	tw.Flush()
}
