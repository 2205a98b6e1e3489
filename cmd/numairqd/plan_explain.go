package main

import (
	"fmt"
	"io"
	"strings"

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

// deviceDrivers is d's driver with, in brackets, those of its
// functions and its class: "virtio-pci (virtio_net, network)".
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
