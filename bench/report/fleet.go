package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/numairqd/numairqd/bench/measure"
)

// fleetPlacers are the rows of each shape, in table order.
var fleetPlacers = []string{"drivers", "irqbalance", "numairqd"}

// fleet writes the section on fleet shapes: for each shape of the
// fixture run, the drivers' spread, irqbalance's and numairqd's
// placement of its queue IRQs, one row each; and, for the summary,
// the figures on which one daemon beats the other.
func (w *writer) fleet(run *measure.FleetRun) {
	if run == nil || len(run.Shapes) == 0 {
		return
	}
	m := run.Meta
	w.p("## Placement on fleet shapes\n")
	w.p("No guest: each shape of the fixture corpus (`internal/fakesys`, `Shapes()`) is written as a sysfs and procfs tree, completed with what a kernel has there that irqbalance 1.9.2 reads and fakesys does not write (the bitmap form of each CPU list, an L1i and L2 per core beside the L3, the `cpuN/nodeM` links, PCI vendor and device ids and `local_cpus`, and `proc/stat`), and each placer gets a copy of it. **irqbalance** (%s, Debian's binary unpacked from its package) runs `--oneshot --foreground --debug --interval=1` as user nobody in a private mount namespace and an empty network namespace, with the copy's `sys` bound over `/sys` and its `proc/interrupts`, `proc/stat` and `proc/irq` over those in `/proc`; the figures are what it wrote to `smp_affinity`. **numairqd** is `numairqd plan --format json` on its copy, with `banned_cpus` and no irqbalance environment file; the figures are each IRQ's `planned` list (its current list where the plan leaves it alone). **drivers** is computed from the tree's topology (`measure.FleetShape.DriverSpread`): queue k of a device on the k-th CPU of its node's hop order over the allowed CPUs, wrapping, as `cpumask_local_spread()` hands them out, every device from the start of the order. The trees carry no load, so irqbalance's is its zero-load first placement. This part ran at %s, commit %s, %s, host kernel %s, and took %s.\n",
		m.Irqbalance, m.Date, m.Commit, m.Go, m.HostKernel, dur(m.WallS))
	w.p("- **queue IRQs**: the IRQs whose names give a queue index (`mlx5_compK`, `...-TxRx-K` and its kin, hns3's by two, `mana_qK`, `mlx4-K@` and `nvmeNqK` from 1, `virtioN-input.K`, `output.K` and `req.K`; `measure.FleetQueue`), less managed ones (read-only `smp_affinity`: every placer leaves them where the kernel put them). Control IRQs are not counted.")
	w.p("- **mean**, **worst distance**: NUMA distance from the device's node to the IRQ's CPU (devices without a node left out); an IRQ on several CPUs counts as the mean of its CPUs, and for the worst as its farthest.")
	w.p("- **max per CPU, core, LLC**: the most queue IRQs on one CPU, one core (SMT siblings, `core_cpus_list`) and one last-level cache (`cache/index3/shared_cpu_list`); an IRQ on w CPUs counts 1/w on each.")
	w.p("- **farther**: queue IRQs farther from their device's node than the drivers' spread puts the same queue. **excluded**: queue IRQs with a banned, isolated or nohz_full CPU (the allowed CPUs are the online ones less these).\n")
	for _, s := range run.Shapes {
		queues, managed := 0, 0
		for _, d := range s.Devices {
			for _, irq := range d.IRQs {
				if _, ok := measure.FleetQueue(irq.Name); ok {
					if irq.Managed {
						managed++
					} else {
						queues++
					}
				}
			}
		}
		banned := "none banned"
		if s.Banned != "" {
			banned = "banned " + s.Banned + " (`IRQBALANCE_BANNED_CPULIST`, `banned_cpus`)"
		}
		w.p("- `%s`: %s; %d CPUs, %d nodes; %s, %d queue IRQs (and %d managed); %s.", s.Name, s.What,
			len(s.Machine.Online), len(s.Machine.Nodes), plural(len(s.Devices), "device"), queues, managed, banned)
	}
	w.p("")
	w.p("| shape | placer | queue IRQs | mean distance | worst distance | max per CPU | max per core | max per LLC | farther | multi-CPU | excluded | run time |")
	w.p("|---|---|---|---|---|---|---|---|---|---|---|---|")
	var notes []string
	for _, s := range run.Shapes {
		figs := map[string]measure.FleetFigures{}
		for _, placer := range fleetPlacers {
			f, err := s.Figures(placer)
			if err != nil {
				w.p("| `%s` | %s | error: %s | | | | | | | | | |", s.Name, placer, oneLine(err.Error()))
				continue
			}
			figs[placer] = f
			t := "–"
			if r, ok := s.Run(placer); ok {
				t = fmt.Sprintf("%.2f s", r.Seconds)
				if r.NotPlanned > 0 {
					notes = append(notes, fmt.Sprintf("`%s`: numairqd's plan leaves %d device IRQs where they are (control or managed ones it does not move, or IRQs it does not list).", s.Name, r.NotPlanned))
				}
			}
			if f.Missing > 0 {
				notes = append(notes, fmt.Sprintf("`%s`: %s has no mask for %d queue IRQs.", s.Name, placer, f.Missing))
			}
			if f.NoNode > 0 {
				notes = append(notes, fmt.Sprintf("`%s`: %d queue IRQs of devices without a NUMA node are left out of the distances.", s.Name, f.NoNode))
			}
			w.p("| `%s` | %s | %d | %s | %s | %s | %s | %s | %d | %d | %d | %s |", s.Name, placer, f.Queues, f2(f.MeanDist), count0(f.WorstDist),
				count2(f.MaxPerCPU), count2(f.MaxPerCore), count2(f.MaxPerLLC), f.Farther, f.MultiCPU, f.OnExcluded, t)
		}
		w.fleetCompare(s.Name, figs)
	}
	w.p("")
	for _, n := range uniq(notes) {
		w.p("- %s", n)
	}
	if len(notes) > 0 {
		w.p("")
	}
}

// fleetCompare records, for the summary, the figures of one shape on
// which irqbalance or numairqd does better (lower is better for each).
func (w *writer) fleetCompare(shape string, figs map[string]measure.FleetFigures) {
	a, okA := figs["irqbalance"]
	b, okB := figs["numairqd"]
	if !okA || !okB {
		return
	}
	for _, c := range []struct {
		what   string
		x, y   float64
		format string
	}{
		{"mean distance", a.MeanDist, b.MeanDist, "%.2f"},
		{"max queue IRQs per CPU", a.MaxPerCPU, b.MaxPerCPU, "%.2f"},
		{"max queue IRQs per core", a.MaxPerCore, b.MaxPerCore, "%.2f"},
		{"max queue IRQs per LLC", a.MaxPerLLC, b.MaxPerLLC, "%.2f"},
		{"queue IRQs farther than the drivers' spread", float64(a.Farther), float64(b.Farther), "%.0f"},
	} {
		w.compare("fleet shape "+shape+" "+c.what, c.x, c.y, true, c.format)
	}
}

// count0 formats a whole number, "–" for NaN.
func count0(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.0f", x)
}

// count2 formats a count that is whole unless multi-CPU masks split
// it, "–" for NaN.
func count2(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	if x == math.Round(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// plural is "n thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// oneLine makes s fit a table cell.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", "\\|")
}

// uniq drops repeated strings, keeping the first of each.
func uniq(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// fleetHeader starts a RESULTS.md that holds only the fixture part,
// for a run without the QEMU part's raw.json.
func (w *writer) fleetHeader(m measure.FleetMeta, wall string) {
	h := &w.head
	fmt.Fprintf(h, "# numairqd vs irqbalance: bench results (fixture part only)\n\n")
	fmt.Fprintf(h, "Generated by `bench/report` from one run; do not edit by hand. Regenerate with:\n\n    %s\n\n", m.Command)
	fmt.Fprintf(h, "The QEMU part (`bench/run.sh qemu`) has not run in this work directory: only its fixture part is here.\n\n")
	fmt.Fprintf(h, "| | |\n|---|---|\n")
	fmt.Fprintf(h, "| date | %s |\n| commit | %s |\n| host kernel | %s |\n| irqbalance | %s |\n| Go | %s |\n", m.Date, m.Commit, m.HostKernel, m.Irqbalance, m.Go)
	fmt.Fprintf(h, "| wall time | fixture part %s", dur(m.WallS))
	if wall != "" {
		fmt.Fprintf(h, "; whole command %s", wall)
	}
	fmt.Fprintf(h, " |\n\n")
}
