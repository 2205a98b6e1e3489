// Command report turns the bench's raw.json (bench/qemu_test.go), its
// fixtures.json (bench/fixtures_test.go) and Go benchmark output into
// bench/RESULTS.md and its PNG charts (placement, traffic and, beside
// the traffic chart, balance.png), drawn with gonum.org/v1/plot.
// bench/run.sh runs it; it needs no guest. Each input is optional but
// one of raw.json and fixtures.json is needed; without raw.json the
// page holds the fixture part only and no chart is drawn. It is a
// module of its own, so that gonum/plot stays out of numairqd's go.mod:
//
//	go run -C bench/report . -raw DIR/raw.json -fixtures DIR/fixtures.json -gobench DIR/gobench.txt \
//	    -benchstat DIR/benchstat.txt [-gobench-baseline REV] -out DIR/RESULTS.md -png DIR/placement.png -traffic-png DIR/traffic.png
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/numairqd/numairqd/bench/measure"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

func main() {
	var o options
	flag.StringVar(&o.raw, "raw", "", "raw.json written by the QEMU bench (optional with -fixtures)")
	flag.StringVar(&o.fixtures, "fixtures", "", "fixtures.json written by the fixture part (optional)")
	flag.StringVar(&o.gobench, "gobench", "", "go test -bench output (optional)")
	flag.StringVar(&o.benchstat, "benchstat", "", "benchstat output (optional)")
	flag.StringVar(&o.goBase, "gobench-baseline", "", "the revision benchstat compares -gobench with, run interleaved (optional)")
	flag.StringVar(&o.out, "out", "bench/RESULTS.md", "markdown to write")
	flag.StringVar(&o.png, "png", "bench/placement.png", "placement chart to write")
	flag.StringVar(&o.trafficPNG, "traffic-png", "bench/traffic.png", "traffic chart to write")
	flag.StringVar(&o.command, "command", "", "the command that produced the run (overrides raw.json's)")
	flag.StringVar(&o.wall, "wall", "", "wall time of the whole command, e.g. 12m31s (optional)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

// options are the command's flags: the input files (raw, fixtures,
// gobench, benchstat), what to write (out, png, trafficPNG) and what to
// say of the run (goBase, command, wall).
type options struct {
	raw, fixtures, gobench, benchstat, goBase string
	out, png, trafficPNG                      string
	command, wall                             string
}

func run(o options) error {
	var fleet *measure.FleetRun
	if o.fixtures != "" {
		fleet = new(measure.FleetRun)
		if err := readJSON(o.fixtures, fleet); err != nil {
			return err
		}
		if o.command != "" {
			fleet.Meta.Command = o.command
		}
	}
	if o.raw == "" {
		if fleet == nil {
			return fmt.Errorf("nothing to report: give -raw, -fixtures or both")
		}
		w := &writer{}
		w.fleetHeader(fleet.Meta, o.wall)
		w.fleet(fleet)
		if err := w.goBenchFile(o.gobench, o.benchstat, o.goBase); err != nil {
			return err
		}
		return os.WriteFile(o.out, w.final(), 0o644)
	}
	var raw measure.Raw
	if err := readJSON(o.raw, &raw); err != nil {
		return err
	}
	if o.command != "" {
		raw.Meta.Command = o.command
	}
	w := &writer{meta: raw.Meta}
	w.header(raw.Meta, o.wall, filepath.Base(o.png))
	rows, dists := w.placement(raw.Placement)
	w.fleet(fleet)
	traffic := trafficResults(raw.Traffic)
	w.traffic(traffic, filepath.Base(o.trafficPNG))
	var daemons []measure.DaemonRun // the floor has no events
	for _, dr := range raw.Daemons {
		if dr.Daemon != "floor" {
			daemons = append(daemons, dr)
		}
	}
	w.reaction(daemons)
	w.cost(raw.Daemons)
	w.eventCost(raw.Daemons)
	w.bans(raw.Bans)
	w.transmit(raw.Transmit)
	if err := w.goBenchFile(o.gobench, o.benchstat, o.goBase); err != nil {
		return err
	}
	w.definitions()
	w.summary()
	if err := writeChart(o.png, rows, dists); err != nil {
		return err
	}
	if len(traffic) > 0 {
		if err := writeTrafficChart(o.trafficPNG, traffic); err != nil {
			return err
		}
	}
	return os.WriteFile(o.out, w.final(), 0o644)
}

// readJSON decodes the JSON file at path into v.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// goBenchFile writes the Go benchmarks' section from the files
// gobench and benchstat (both optional; nothing without gobench).
func (w *writer) goBenchFile(gobench, benchstat, goBase string) error {
	if gobench == "" {
		return nil
	}
	gb, err := os.ReadFile(gobench)
	if err != nil {
		return err
	}
	var bs []byte
	if benchstat != "" {
		bs, _ = os.ReadFile(benchstat)
	}
	w.goBench(gb, bs, goBase)
	return nil
}

// writer builds RESULTS.md; wins collects the figures where irqbalance
// came out ahead, for the summary at the top.
type writer struct {
	head, body bytes.Buffer
	meta       measure.Meta
	irqbWins   []string
	numaWins   []string
	ratios     []string
	targets    []string
}

func (w *writer) p(format string, args ...any) { fmt.Fprintf(&w.body, format+"\n", args...) }

func (w *writer) final() []byte {
	var b bytes.Buffer
	b.Write(w.head.Bytes())
	b.Write(w.body.Bytes())
	return b.Bytes()
}

func (w *writer) header(m measure.Meta, wall, png string) {
	h := &w.head
	fmt.Fprintf(h, "# numairqd vs irqbalance: bench results\n\n")
	fmt.Fprintf(h, "Generated by `bench/report` from one run; do not edit by hand. Regenerate with:\n\n    %s\n\n", m.Command)
	fmt.Fprintf(h, "| | |\n|---|---|\n")
	fmt.Fprintf(h, "| date | %s |\n| commit | %s |\n| host kernel | %s |\n| guest kernel | %s (Debian's, under QEMU TCG, `-cpu qemu64`) |\n",
		m.Date, m.Commit, m.HostKernel, m.GuestKernel)
	fmt.Fprintf(h, "| QEMU | %s |\n| irqbalance | %s (Debian's binary, with its shared libraries copied into the initramfs) |\n| Go | %s |\n", m.QEMU, m.Irqbalance, m.Go)
	if m.Baseline != "" {
		fmt.Fprintf(h, "| baseline | numairqd built at %s (`BENCH_BASELINE`), measured in boots of its own just before the working tree's: rows `numairqd %s` |\n", m.Baseline, m.Baseline)
	}
	fmt.Fprintf(h, "| parameters | %d repetitions per event, %.0f s window, %.0f s idle period, %d offline/online cycles of churn |\n",
		m.Reps, m.WindowS, m.IdleS, m.ChurnCycles)
	fmt.Fprintf(h, "| wall time | QEMU part %s", dur(m.WallS))
	if wall != "" {
		fmt.Fprintf(h, "; whole command %s", wall)
	}
	fmt.Fprintf(h, " (host: 2 cores) |\n")
	fmt.Fprintf(h, "| host load | 1-min load average up to %.2f; another QEMU (not this bench's) was running in %d of %d 5-second samples |\n\n", m.LoadMax, m.ForeignSamples, m.Samples)
	fmt.Fprintf(h, "Placement chart: [%s](%s) (described under [Placement](#placement)).\n\n", png, png)
}

func (w *writer) summary() {
	h := &w.head
	fmt.Fprintf(h, "## Summary\n\n")
	if len(w.ratios) > 0 {
		fmt.Fprintf(h, "Ratios between the daemons, same run:\n\n")
		for _, r := range w.ratios {
			fmt.Fprintf(h, "- %s\n", r)
		}
		fmt.Fprintln(h)
	}
	if len(w.targets) > 0 {
		fmt.Fprintf(h, "Against the targets (issue 14: medians of the repetitions, same run as irqbalance):\n\n")
		for _, t := range w.targets {
			fmt.Fprintf(h, "- %s\n", t)
		}
		fmt.Fprintln(h)
	}
	fmt.Fprintf(h, "**Where irqbalance does better** (every figure of this run on which it beats numairqd):\n\n")
	if len(w.irqbWins) == 0 {
		fmt.Fprintf(h, "- none in this run.\n")
	}
	for _, s := range w.irqbWins {
		fmt.Fprintf(h, "- %s\n", s)
	}
	fmt.Fprintf(h, "\n**Where numairqd does better:**\n\n")
	if len(w.numaWins) == 0 {
		fmt.Fprintf(h, "- none in this run.\n")
	}
	for _, s := range w.numaWins {
		fmt.Fprintf(h, "- %s\n", s)
	}
	fmt.Fprintln(h)
}

// compare records which daemon did better on a figure; lowerBetter
// says which way is better.
func (w *writer) compare(what string, irqb, numa float64, lowerBetter bool, format string) string {
	if math.IsNaN(irqb) || math.IsNaN(numa) || irqb == numa {
		return "tie"
	}
	better := (irqb < numa) == lowerBetter
	s := fmt.Sprintf("%s: irqbalance "+format+", numairqd "+format, what, irqb, numa)
	if better {
		w.irqbWins = append(w.irqbWins, s)
		return "**irqbalance**"
	}
	w.numaWins = append(w.numaWins, s)
	return "numairqd"
}

func dur(s float64) string {
	if s >= 60 {
		return fmt.Sprintf("%dm%02ds", int(s)/60, int(s)%60)
	}
	return fmt.Sprintf("%.1fs", s)
}

func f2(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.2f", x)
}

func mustMask(s string) cpumask.Mask {
	m, _ := cpumask.ParseList(s)
	return m
}

func (w *writer) placement(runs []measure.PlacementRun) ([][]panel, []int) {
	w.p("## Placement\n")
	w.p("Each guest booted once. The script saved every IRQ's `smp_affinity_list`, ran `irqbalance --oneshot --foreground`, wrote the saved lists back (the reset is checked: every queue IRQ must be back on its starting list), then ran `numairqd run --oneshot`. Both got the same banned list (`IRQBALANCE_BANNED_CPULIST` and `banned_cpus`). Figures are computed on the host from the guest's `/proc/irq/N/smp_affinity_list`; the effective affinity is in a separate table below. \"driver\" is the state before either daemon (virtio-net's own spread).\n")
	w.p("The chart [placement.png](placement.png) has one row per guest and one panel per state (driver, irqbalance, numairqd): a column per CPU, a row per queue IRQ (I*k* = `input.k`, O*k* = `output.k`), a filled cell where the IRQ's mask holds that CPU, coloured by the NUMA distance from the device's node to the CPU (green 10 ... red farthest); hatched = one CPU of a multi-CPU mask; grey column = banned CPU.\n")
	var rows [][]panel
	distSet := map[int]bool{}
	for _, pr := range runs {
		banned := mustMask(pr.Banned)
		w.p("### %s: %s\n", pr.Name, pr.Title)
		if pr.Banned != "" {
			w.p("Banned for both: CPUs %s.\n", pr.Banned)
		}
		w.p("One-shot runs in the guest: irqbalance %.1f s (exit %d), numairqd %.2f s (exit %d). irqbalance's one-shot waits one 10 s interval before it places.\n",
			pr.IrqbalanceS, pr.IrqbalanceRC, pr.NumairqdS, pr.NumairqdRC)
		for _, n := range pr.Start.Nodes {
			for _, d := range n.Distance {
				distSet[d] = true
			}
		}
		var row []panel
		for _, dev := range measure.Devices(pr.Start) {
			if dev.Kind != "virtio-net" {
				continue
			}
			get := func(which string) (measure.Device, bool) {
				st := map[string]guestinfo.State{"driver": pr.Start, "irqbalance": pr.Irqbalance, "numairqd": pr.Numairqd}[which]
				for _, d := range measure.Devices(st) {
					if d.PCI == dev.PCI && d.Kind == dev.Kind {
						return d, true
					}
				}
				return measure.Device{}, false
			}
			w.p("Device %s %s (%s) on node %d, %d queue IRQs (%d queues).\n", dev.Kind, dev.PCI, dev.Child, dev.Node, len(dev.Queues), dev.Queues[len(dev.Queues)-1].Queue+1)
			for _, eff := range []bool{false, true} {
				if eff {
					w.p("Effective affinity (`effective_affinity_list`). No traffic flows in the guest; on x86 an MSI's effective CPU may change only at its next interrupt, so this lags the requested mask and mostly shows where the vector was first set up. Reported for completeness, not for comparison.\n")
				} else {
					w.p("Requested affinity (`smp_affinity_list`):\n")
				}
				w.p("| state | mean distance | ideal | max IRQs/CPU | mean IRQs/used CPU | CPUs used | queue i on i-th CPU of spread order | linear order (CPU id) | multi-CPU masks | IRQs on banned/isolated CPUs |")
				w.p("|---|---|---|---|---|---|---|---|---|---|")
				figs := map[string]measure.Figures{}
				for _, which := range []string{"driver", "irqbalance", "numairqd"} {
					d, ok := get(which)
					if !ok {
						w.p("| %s | device missing | | | | | | | | |", which)
						continue
					}
					st := map[string]guestinfo.State{"driver": pr.Start, "irqbalance": pr.Irqbalance, "numairqd": pr.Numairqd}[which]
					f := measure.Measure(st, d, banned, eff)
					figs[which] = f
					w.p("| %s | %s | %s | %s | %s | %d | %d/%d | %d/%d | %d | %d |", which, f2(f.MeanDist), f2(f.IdealDist), f2(f.MaxPerCPU),
						f2(f.MeanPerUsedCPU), f.CPUsUsed, f.InSpread, f.IRQs, f.InLinear, f.IRQs, f.MultiCPU, f.OnBanned)
					if !eff {
						row = append(row, panel{title: pr.Name + " " + which, state: st, dev: d, banned: banned})
					}
				}
				w.p("")
				if eff {
					continue
				}
				a, b := figs["irqbalance"], figs["numairqd"]
				var verdict []string
				add := func(what string, x, y float64, lower bool, format string) {
					verdict = append(verdict, what+": "+w.compare(pr.Name+" "+what, x, y, lower, format))
				}
				add("mean distance", a.MeanDist, b.MeanDist, true, "%.2f")
				add("max IRQs per CPU", a.MaxPerCPU, b.MaxPerCPU, true, "%.2f")
				add("CPUs used", float64(a.CPUsUsed), float64(b.CPUsUsed), false, "%.0f")
				add("queues in spread order", float64(a.InSpread), float64(b.InSpread), false, "%.0f")
				nq := dev.Queues[len(dev.Queues)-1].Queue + 1
				if allowed := len(pr.Start.Online) - banned.Weight(); nq >= allowed {
					// More queues than CPUs: MANA's linear rule, which
					// numairqd's auto policy follows.
					add("queues in linear order", float64(a.InLinear), float64(b.InLinear), false, "%.0f")
				}
				add("IRQs on banned CPUs", float64(a.OnBanned), float64(b.OnBanned), true, "%.0f")
				w.p("Better in this guest — %s.\n", strings.Join(verdict, "; "))
				if a.MeanDist < b.MeanDist && a.MaxPerCPU > b.MaxPerCPU {
					w.p("irqbalance's lower mean distance comes from stacking: %.2f queue IRQs on its busiest CPU against numairqd's %.2f. The \"ideal\" column is the lowest mean when queues get a CPU each (see Definitions); a mean below it means queues share CPUs.\n", a.MaxPerCPU, b.MaxPerCPU)
				}
			}
			w.control(pr, dev)
		}
		rows = append(rows, row)
	}
	var dists []int
	for d := range distSet {
		dists = append(dists, d)
	}
	sort.Ints(dists)
	return rows, dists
}

// control lists where the non-queue IRQs of the devices ended up.
func (w *writer) control(pr measure.PlacementRun, dev measure.Device) {
	var lines []string
	for _, which := range []string{"driver", "irqbalance", "numairqd"} {
		st := map[string]guestinfo.State{"driver": pr.Start, "irqbalance": pr.Irqbalance, "numairqd": pr.Numairqd}[which]
		var parts []string
		for _, d := range measure.Devices(st) {
			for _, c := range d.Control {
				parts = append(parts, fmt.Sprintf("`%s` %s (node %d device)", c.Actions[0], c.Affinity, d.Node))
			}
		}
		lines = append(lines, fmt.Sprintf("%s: %s", which, strings.Join(parts, ", ")))
	}
	w.p("Control IRQs (not counted above): %s. NVMe I/O queue IRQs are managed by the kernel: neither daemon can move them (numairqd logs the EIO and leaves them; irqbalance 1.9.2 does not report it).\n", strings.Join(lines, "; "))
}
