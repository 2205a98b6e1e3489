package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/policy"
)

// planLegend explains the tables' CURRENT -> PLANNED columns once.
const planLegend = `Tables: CURRENT -> PLANNED is the affinity now -> the one to write; "= X": already X, nothing written; ` +
	`"(left alone)": not touched; EFFECTIVE "(outside)": the kernel's effective CPUs are not within it.`

// writeExcluded lists, by source, the online CPUs the plan leaves out.
func writeExcluded(w io.Writer, p *policy.Plan) {
	for _, e := range p.Excluded {
		writeWrapped(w, fmt.Sprintf("Not allowed: %s, %s", e.CPUs, e.Why), "  ")
	}
}

// deviceDrivers is d's driver with, in brackets, its functions' and
// its class: "virtio-pci (virtio_net, network)".
func deviceDrivers(d policy.Device) string {
	var more []string
	if len(d.Drivers) > 1 {
		more = append(more, d.Drivers[1:]...)
	}
	if c := inventory.ClassName(d.Class); c != "" {
		more = append(more, c)
	}
	s := orDash(d.Driver)
	if len(more) > 0 {
		s += " (" + strings.Join(more, ", ") + ")"
	}
	return s
}

// writeDeviceWhy prints, above d's IRQ table, why d is planned as it
// is: its policy, the CPUs it may use and what other devices took.
func writeDeviceWhy(w io.Writer, p *policy.Plan, d policy.Device) {
	writeWrapped(w, "  policy: "+d.PolicyWhy, "    ")
	cpus := "allowed CPUs " + orDash(p.Allowed.String())
	if uses := cpumask.New(d.Order...); len(d.Order) > 0 && !uses.Equal(p.Allowed) {
		cpus += ", of which it uses " + uses.String()
	}
	var not []string
	for _, e := range p.Excluded {
		not = append(not, e.CPUs.String()+" ("+e.Source+")")
	}
	if len(not) > 0 {
		cpus += "; not allowed: " + strings.Join(not, ", ")
	}
	writeWrapped(w, "  cpus: "+cpus, "    ")
	if len(d.Taken) > 0 {
		var took []string
		for _, t := range d.Taken {
			took = append(took, t.CPUs.String()+" by "+t.Device)
		}
		writeWrapped(w, "  taken: its drivers' CPUs that hold other devices' queues: "+strings.Join(took, ", "), "    ")
	}
	if l := d.Locality; l != nil {
		s := fmt.Sprintf("  locality: queue IRQs at mean distance %.1f, worst %d; the driver's own spread: %.1f, worst %d",
			l.Mean, l.Worst, l.DriversMean, l.DriversWorst)
		if l.InPackage > 0 {
			s += fmt.Sprintf("; %d farther but in the package of the driver's CPU", l.InPackage)
		}
		if l.Farther > 0 {
			s += fmt.Sprintf("; %d farther than the driver puts them", l.Farther)
		}
		writeWrapped(w, s, "    ")
	}
}

// writeStacking prints the most queue IRQs the plan puts on one CPU,
// core and LLC, beside the drivers' own spreads together.
func writeStacking(w io.Writer, p *policy.Plan) {
	llc := func(st policy.Stacking) string {
		if st.LLC == 0 {
			return "-"
		}
		return fmt.Sprint(st.LLC)
	}
	fmt.Fprintf(w, "Most queue IRQs on one CPU %d, core %d, LLC %s; the drivers' own spreads together: %d, %d, %s\n",
		p.Stacking.CPU, p.Stacking.Core, llc(p.Stacking), p.DriversStacking.CPU, p.DriversStacking.Core, llc(p.DriversStacking))
}

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
		planned := plannedText(t.Planned, t.LeftAlone(), p.XPSDiffers(t))
		fmt.Fprintf(tw, "  %s tx-%d\t%s\t%s -> %s\t%s\n", t.Interface, t.Queue, intOrDash(t.IRQ),
			orDash(t.Current.String()), planned, t.Reason)
	}
	tw.Flush()
}

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
		queue := "-"
		if t.Queue >= 0 {
			queue = fmt.Sprintf("%s-%d", t.Kind, t.Queue)
		}
		planned := plannedText(t.Planned, t.LeftAlone(), p.NAPIThreadDiffers(t))
		fmt.Fprintf(tw, "  %s %s\t%d\t%s\t%s\t%s -> %s\t%s\n", t.Interface, t.Comm, t.PID, queue, intOrDash(t.IRQ),
			orDash(t.Current.String()), planned, t.Reason)
	}
	tw.Flush()
}

// plannedText is an affinity to write: "(left alone)", "= X" when it
// is X already, else X.
func plannedText(m cpumask.Mask, leftAlone, differs bool) string {
	switch {
	case leftAlone:
		return "(left alone)"
	case !differs:
		return "= " + m.String()
	}
	return m.String()
}
