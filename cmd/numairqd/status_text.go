package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/numairqd/numairqd/pkg/api"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
)

// statusWidth is what every line of the text view fits in.
const statusWidth = 100

// writeStatusText writes f as text: the round, bans and failures, each
// device's queues compacted into runs, then the CPUs three to a line.
// Lines wrap within statusWidth; cut guards against one that does not.
func writeStatusText(w io.Writer, f *frame) {
	var b strings.Builder
	defer func() {
		for line := range strings.SplitAfterSeq(b.String(), "\n") {
			io.WriteString(w, cut(line))
		}
	}()
	if f.Error != "" {
		writeWrapped(&b, fmt.Sprintf("numairqd at %s  %s", f.Address, f.Sampled.Format("15:04:05 UTC")), "  ")
		b.WriteString("\n")
		writeWrapped(&b, f.Error, "  ")
		return
	}
	st, plan := f.Status, f.Plan
	writeWrapped(&b, fmt.Sprintf("numairqd %s at %s  generation %d  %s", cmp.Or(st.Version, "(devel)"), f.Address, st.Generation,
		f.Sampled.Format("15:04:05 UTC")), "  ")
	if f.Mismatch != "" {
		writeWrapped(&b, "warning: "+f.Mismatch, "  ")
	}
	if r := st.ConfigRejected; r != nil {
		first, rest, more := strings.Cut(r.Error, "\n")
		line := fmt.Sprintf("CONFIG REJECTED at %s (%s ago), the previous config stays in force: %s", r.At.UTC().Format("15:04:05"),
			f.Sampled.Sub(r.At).Round(time.Second), first)
		if more {
			line += fmt.Sprintf(" (and %s: --format json)", plural(strings.Count(rest, "\n")+1, "more problem"))
		}
		writeWrapped(&b, line, "  ")
	}
	round := fmt.Sprintf("last round: %s, finished %s (%s ago), took %s", st.Trigger, st.Finished.Format("15:04:05"),
		f.Sampled.Sub(st.Finished).Round(time.Second), time.Duration(st.TookSeconds*float64(time.Second)).Round(time.Microsecond))
	if st.DryRun {
		round += fmt.Sprintf("; mode observe, DRY RUN: %s not made", plural(st.Writes.DryRun, "write"))
	} else {
		round += fmt.Sprintf("; mode enforce: %d written, %d unchanged", st.Writes.Written, st.Writes.Unchanged)
	}
	writeWrapped(&b, round, "  ")
	writeWrapped(&b, fmt.Sprintf("config %s; CPUs online %s, allowed %s", cmp.Or(st.Config, "(defaults)"), st.Online, st.Allowed), "  ")
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
		writeWrapped(&b, "bans unreadable, previous ones kept: "+st.BansError, "  ")
	}
	writeWrapped(&b, fmt.Sprintf("IRQs: %d placed, %d managed, %d ignored, %d failed, %d effective mismatch, %d pending first interrupt",
		st.IRQs["placed"], st.IRQs["managed"], st.IRQs["ignored"], st.IRQs["failed"], st.IRQs["effective_mismatch"], st.IRQs["effective_pending"]), "      ")
	if !st.Consistent {
		b.WriteString("warning: CPUs kept changing during the round's read\n")
	}
	if len(st.ManagedOnBanned) > 0 {
		writeWrapped(&b, "kernel-managed IRQs on banned CPUs (numairqd cannot move them): "+intList(st.ManagedOnBanned), "  ")
	}
	for _, fi := range st.Fights {
		writeWrapped(&b, fmt.Sprintf("IRQ %d %s in a fight with %s since %s: %s, numairqd wants %s, found %s; next rewrite %s",
			fi.IRQ, fi.Name, fi.Writer, fi.Since.UTC().Format("15:04:05"), plural(fi.Overwrites, "overwrite"), fi.Want, fi.Found, fi.Next.UTC().Format("15:04:05")), "    ")
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
		writeWrapped(&b, "rates: "+rates.Error, "  ")
	}

	var legend int
	nodes := cpuNodes(st.Nodes)
	devs := slices.Clone(plan.Devices)
	slices.SortStableFunc(devs, func(a, b policy.Device) int { return strings.Compare(a.PCI, b.PCI) })
	for _, d := range devs {
		driver := d.Driver
		if len(d.Drivers) > 0 {
			driver = strings.Join(d.Drivers, "/")
		}
		head := fmt.Sprintf("%s  %s", cmp.Or(d.PCI, "(no PCI device)"), driver)
		if len(d.Interfaces) > 0 {
			head += " " + strings.Join(d.Interfaces, ",")
		}
		head += fmt.Sprintf("  node %d  policy %s", d.Node, d.Policy)
		if d.Rule != "" {
			head += "  rule " + d.Rule
		}
		b.WriteString("\n")
		writeWrapped(&b, head+"  "+rateText(deviceRate(d, rates))+" IRQ/s", "    ")
		if d.PolicyWhy != "" {
			writeWrapped(&b, "  policy: "+d.PolicyWhy, "    ")
		}
		runs := queueRuns(d, st, nodes, rates)
		for _, r := range runs {
			legend |= r.legend
		}
		writeRuns(&b, runs)
	}
	legend |= writeCPUs(&b, st, plan, nodes, rates)
	var keys []string
	for i, k := range legendKeys {
		if legend&(1<<i) != 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		b.WriteString("\n" + strings.Join(keys, "; ") + "\n")
	}
}

// Marks of the text view that the legend explains, each only when a
// line of the frame has it: bit i is legendKeys[i].
const (
	legendStep   = 1 << iota // a run's queue k on the k-th CPU
	legendAll                // a run's queues each on all of a mask
	legendBanned             // a CPU the plan does not allow
)

var legendKeys = []string{"q0-7 4-11: queue k on the k-th CPU", "all 0-7: each on all of 0-7", "* banned"}

// Widths at which a device table's CPU and node lists wrap, and the
// narrowest reason column: a narrower one goes under its row, indented.
const (
	maskColumn = 20
	nodeColumn = 9
	whyMin     = 30
	whyIndent  = 6
)

// writeRuns writes a device's runs as a table whose columns are as
// wide as their widest cell; the reason, last, wraps under itself, or
// goes under the row when the columns leave it less than whyMin.
func writeRuns(b *strings.Builder, runs []queueRun) {
	head := []string{"QUEUES", "NOW", "PLANNED", "NODE", "HOP", "DIST", "IRQ/S"}
	limits := []int{0, maskColumn, maskColumn, nodeColumn, 0, 0, 0}
	rows := [][][]string{cells(head, limits)}
	for _, r := range runs {
		rows = append(rows, cells([]string{r.label, r.now, r.planned, r.node, r.hop, r.dist, rateText(r.rate)}, limits))
	}
	widths := make([]int, len(head))
	for _, row := range rows {
		for i, c := range row {
			for _, line := range c {
				widths[i] = max(widths[i], len(line))
			}
		}
	}
	indent := 2
	for _, w := range widths {
		indent += w + 2
	}
	below := statusWidth-indent < whyMin
	for i, row := range rows {
		why := "WHY"
		if i > 0 {
			why = runs[i-1].why
		}
		var whys []string
		if i == 0 || !below {
			whys = wrap(why, statusWidth-indent, statusWidth-indent)
		}
		height := len(whys)
		for _, c := range row {
			height = max(height, len(c))
		}
		for j := range height {
			b.WriteString(" ")
			for k, c := range row {
				cell := ""
				if j < len(c) {
					cell = c[j]
				}
				if k >= 4 { // HOP, DIST, IRQ/S: numbers align right
					fmt.Fprintf(b, " %*s ", widths[k], cell)
				} else {
					fmt.Fprintf(b, " %-*s ", widths[k], cell)
				}
			}
			b.WriteString(" ")
			if j < len(whys) {
				b.WriteString(whys[j])
			}
			b.WriteString("\n")
		}
		if i > 0 && below {
			writeWrapped(b, strings.Repeat(" ", whyIndent)+why, strings.Repeat(" ", whyIndent))
		}
	}
}

// cells wraps each cell of a row to its limit (0: none).
func cells(row []string, limits []int) [][]string {
	out := make([][]string, len(row))
	for i, c := range row {
		if limits[i] > 0 {
			out[i] = wrap(c, limits[i], limits[i])
		} else {
			out[i] = []string{c}
		}
	}
	return out
}

// writeWrapped writes s wrapped at statusWidth, keeping its leading
// spaces, the lines after the first indented.
func writeWrapped(w io.Writer, s, indent string) {
	body := strings.TrimLeft(s, " ")
	lead := s[:len(s)-len(body)]
	for i, line := range wrap(body, statusWidth-len(lead), statusWidth-len(indent)) {
		if i == 0 {
			io.WriteString(w, lead+line+"\n")
		} else {
			io.WriteString(w, indent+line+"\n")
		}
	}
}

// wrap breaks s at spaces into lines of at most first bytes, then
// rest; a longer word breaks as pieces does. s that fits is kept as is.
func wrap(s string, first, rest int) []string {
	if len(s) <= first {
		return []string{s}
	}
	var lines []string
	line := ""
	width := first
	add := func(piece, sep string) {
		if line != "" && len(line)+len(sep)+len(piece) > width {
			lines = append(lines, line)
			line, width = "", rest
		}
		if line == "" {
			sep = ""
		}
		line += sep + piece
	}
	for _, w := range strings.Fields(s) {
		sep := " "
		for _, p := range pieces(w, min(first, rest)) {
			add(p, sep)
			sep = ""
		}
	}
	return append(lines, line)
}

// pieces splits a word longer than width after its commas, and a piece
// still longer every width bytes.
func pieces(w string, width int) []string {
	if len(w) <= width {
		return []string{w}
	}
	var out []string
	for _, p := range strings.SplitAfter(w, ",") {
		for len(p) > width {
			out = append(out, p[:width])
			p = p[width:]
		}
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// writeCPUs writes the online CPUs three to a line: node, IRQ/s,
// irq+softirq time, device IRQs planned there, * when not allowed;
// it returns legendBanned when it marked one.
func writeCPUs(b *strings.Builder, st *api.Status, plan *policy.Doc, nodes map[int]int, r *rates) (legend int) {
	online, _ := cpumask.ParseList(st.Online)
	allowed, _ := cpumask.ParseList(st.Allowed)
	placed := map[int]int{}
	for _, d := range plan.Devices {
		for _, q := range d.IRQs {
			m := q.Planned
			if m.IsEmpty() {
				m = q.Current
			}
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
			mark, legend = "*", legendBanned
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
	return legend
}

// cpuNodes maps each online CPU to its node.
func cpuNodes(ns []api.StatusNode) map[int]int {
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
func deviceRate(d policy.Device, r *rates) float64 {
	if r == nil || r.IRQs == nil {
		return -1
	}
	var sum float64
	for _, q := range d.IRQs {
		sum += r.IRQs[strconv.Itoa(q.Number)]
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

// plural is "1 write", "2 writes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func intList(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// cut shortens a line to statusWidth, marking the cut, and drops its
// trailing spaces.
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
