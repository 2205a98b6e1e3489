package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/policy"
)

// statusWidth is what every line of the text view fits in.
const statusWidth = 100

// writeStatusText writes f as the text view: the round, bans and
// failures, then each device's queues compacted into runs, then the
// CPUs three to a line. Lines longer than statusWidth are cut.
func writeStatusText(w io.Writer, f *frame) {
	var b strings.Builder
	defer func() {
		for line := range strings.SplitAfterSeq(b.String(), "\n") {
			io.WriteString(w, cut(line))
		}
	}()
	if f.Error != "" {
		fmt.Fprintf(&b, "numairqd at %s  %s\n\n%s\n", f.Address, f.Sampled.Format("15:04:05 UTC"), f.Error)
		return
	}
	st, plan := f.Status, f.Plan
	fmt.Fprintf(&b, "numairqd %s at %s  generation %d  %s\n", cmp.Or(st.Version, "(devel)"), f.Address, st.Generation,
		f.Sampled.Format("15:04:05 UTC"))
	fmt.Fprintf(&b, "last round: %s, finished %s (%s ago), took %s", st.Trigger, st.Finished.Format("15:04:05"),
		f.Sampled.Sub(st.Finished).Round(time.Second), time.Duration(st.TookSeconds*float64(time.Second)).Round(time.Microsecond))
	if st.DryRun {
		fmt.Fprintf(&b, "; DRY RUN: %d writes not made", st.Writes.DryRun)
	} else {
		fmt.Fprintf(&b, "; %d written, %d unchanged", st.Writes.Written, st.Writes.Unchanged)
	}
	fmt.Fprintf(&b, "\nconfig %s; CPUs online %s, allowed %s\n", cmp.Or(st.Config, "(defaults)"), st.Online, st.Allowed)
	var bans []string
	for _, ban := range st.Bans {
		s := ban.Source + " " + ban.CPUs
		if ban.File != "" {
			s += " (" + ban.File + ")"
		}
		bans = append(bans, s)
	}
	writeWrapped(&b, "bans: "+cmp.Or(strings.Join(bans, "; "), "none"), "      ")
	if st.BansError != "" {
		fmt.Fprintf(&b, "bans unreadable, previous ones kept: %s\n", st.BansError)
	}
	fmt.Fprintf(&b, "IRQs: %d placed, %d managed, %d ignored, %d failed, %d effective mismatch, %d pending first interrupt\n",
		st.IRQs["placed"], st.IRQs["managed"], st.IRQs["ignored"], st.IRQs["failed"], st.IRQs["effective_mismatch"], st.IRQs["effective_pending"])
	if !st.Consistent {
		b.WriteString("warning: CPUs kept changing during the round's read\n")
	}
	if len(st.ManagedOnBanned) > 0 {
		fmt.Fprintf(&b, "kernel-managed IRQs on banned CPUs (numairqd cannot move them): %s\n", intList(st.ManagedOnBanned))
	}
	for _, fl := range st.Failed {
		line := fmt.Sprintf("IRQ %d %s (%s) %s", fl.IRQ, fl.Name, fl.Device, fl.State)
		if fl.Kind != "" {
			line += " " + strings.TrimSpace(fl.Kind+" "+fl.Errno)
		}
		line += ", planned " + cmp.Or(fl.Planned, "-")
		if fl.Effective != "" {
			line += ", effective " + fl.Effective
		}
		writeWrapped(&b, line+": "+fl.Reason, "    ")
	}
	rates := f.Rates
	if rates != nil && rates.Error != "" {
		fmt.Fprintf(&b, "rates: %s\n", rates.Error)
	}

	nodes := cpuNodes(st.Nodes)
	devs := slices.Clone(plan.Devices)
	slices.SortStableFunc(devs, func(a, b policy.DeviceDoc) int { return strings.Compare(a.PCI, b.PCI) })
	for _, d := range devs {
		driver := d.Driver
		if len(d.Drivers) > 0 {
			driver = strings.Join(d.Drivers, "/")
		}
		fmt.Fprintf(&b, "\n%s  %s", cmp.Or(d.PCI, "(no PCI device)"), driver)
		if len(d.Interfaces) > 0 {
			fmt.Fprintf(&b, " %s", strings.Join(d.Interfaces, ","))
		}
		fmt.Fprintf(&b, "  node %d  policy %s", d.Node, d.Policy)
		if d.Rule != "" {
			fmt.Fprintf(&b, "  rule %s", d.Rule)
		}
		fmt.Fprintf(&b, "  %s IRQ/s\n", rateText(deviceRate(d, rates)))
		if d.PolicyWhy != "" {
			writeWrapped(&b, "  policy: "+d.PolicyWhy, "    ")
		}
		writeRuns(&b, queueRuns(d, st, nodes, rates))
	}
	writeCPUs(&b, st, plan, nodes, rates)
	b.WriteString("\nq0-7 4-11: queue k on the k-th CPU; all 0-7: each on all of 0-7; * banned\n")
}

// writeRuns writes a device's runs as a table whose columns are as
// wide as their widest cell; the reason, last, wraps at word boundaries
// under itself so that nothing of it is lost.
func writeRuns(b *strings.Builder, runs []queueRun) {
	head := []string{"QUEUES", "NOW", "PLANNED", "NODE", "HOP", "DIST", "IRQ/S"}
	rows := [][]string{head}
	for _, r := range runs {
		rows = append(rows, []string{r.label, r.now, r.planned, r.node, r.hop, r.dist, rateText(r.rate)})
	}
	widths := make([]int, len(head))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len(c))
		}
	}
	indent := 2
	for _, w := range widths {
		indent += w + 2
	}
	whyWidth := max(statusWidth-indent, 30)
	for i, row := range rows {
		b.WriteString(" ")
		for k, c := range row {
			if k >= 4 { // HOP, DIST, IRQ/S: numbers align right
				fmt.Fprintf(b, " %*s ", widths[k], c)
			} else {
				fmt.Fprintf(b, " %-*s ", widths[k], c)
			}
		}
		b.WriteString(" ")
		why := "WHY"
		if i > 0 {
			why = runs[i-1].why
		}
		for j, line := range wrap(why, whyWidth) {
			if j > 0 {
				b.WriteString(strings.Repeat(" ", indent))
			}
			b.WriteString(line + "\n")
		}
	}
}

// writeWrapped writes s wrapped at statusWidth, the lines after the
// first indented.
func writeWrapped(b *strings.Builder, s, indent string) {
	lead := s[:len(s)-len(strings.TrimLeft(s, " "))]
	for i, line := range wrap(s, statusWidth-len(indent)) {
		if i == 0 {
			b.WriteString(lead)
		} else {
			b.WriteString(indent)
		}
		b.WriteString(line + "\n")
	}
}

// wrap breaks s into lines of at most width bytes at spaces; a word
// longer than width stands on its own line (and is cut when printed).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}

// writeCPUs writes the online CPUs three to a line: node, interrupts
// per second, hardirq+softirq time, device IRQs planned there, and *
// for a CPU the plan does not allow.
func writeCPUs(b *strings.Builder, st *metrics.Status, plan *policy.Doc, nodes map[int]int, r *rates) {
	online, _ := cpumask.ParseList(st.Online)
	allowed, _ := cpumask.ParseList(st.Allowed)
	placed := map[int]int{}
	for _, d := range plan.Devices {
		for _, q := range d.IRQs {
			m, _ := cpumask.ParseList(cmp.Or(q.Planned, q.Current))
			for cpu := range m.All() {
				placed[cpu]++
			}
		}
	}
	byCPU := map[int]cpuRate{}
	if r != nil {
		for _, c := range r.CPUs {
			byCPU[c.CPU] = c
		}
	}
	const head = " CPU NODE    IRQ/S  TIME%  IRQS"
	fmt.Fprintf(b, "\n%s  %s  %s\n", head, head, head)
	i := 0
	for cpu := range online.All() {
		rate, pct := "-", "-"
		if c, ok := byCPU[cpu]; ok {
			rate = rateText(c.PerSecond)
			if c.IRQTimePercent != nil {
				pct = strconv.FormatFloat(*c.IRQTimePercent, 'f', 1, 64)
			}
		}
		mark := " "
		if !allowed.Contains(cpu) {
			mark = "*"
		}
		sep := "  "
		if i%3 == 2 {
			sep = "\n"
		}
		fmt.Fprintf(b, "%4d%s%4d %8s %6s %5d%s", cpu, mark, nodes[cpu], rate, pct, placed[cpu], sep)
		i++
	}
	if i%3 != 0 {
		b.WriteString("\n")
	}
}

// cpuNodes maps each online CPU to its node.
func cpuNodes(ns []metrics.StatusNode) map[int]int {
	out := map[int]int{}
	for _, n := range ns {
		m, _ := cpumask.ParseList(n.CPUs)
		for cpu := range m.All() {
			out[cpu] = n.Node
		}
	}
	return out
}

// deviceRate is the interrupts per second of d's IRQs; -1 unknown.
func deviceRate(d policy.DeviceDoc, r *rates) float64 {
	if r == nil || r.IRQs == nil {
		return -1
	}
	var sum float64
	for _, q := range d.IRQs {
		sum += r.IRQs[strconv.Itoa(q.IRQ)]
	}
	return sum
}

// rateText is a rate in at most 8 columns; "-" for unknown.
func rateText(v float64) string {
	switch {
	case v < 0:
		return "-"
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v < 1e7:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v/1e6, 'f', 0, 64) + "M"
}

func intList(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// cut shortens a line to statusWidth columns, marking the cut, and
// drops its trailing spaces.
func cut(line string) string {
	body, nl := strings.CutSuffix(line, "\n")
	body = strings.TrimRight(body, " ")
	if r := []rune(body); len(r) > statusWidth {
		body = string(r[:statusWidth-3]) + "..."
	}
	if nl {
		return body + "\n"
	}
	return body
}
