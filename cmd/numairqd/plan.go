package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
)

// configFile returns the config to read and whether it may be missing:
// the file named by --config must exist; without --config,
// config.DefaultPath is read if it exists, else the defaults apply.
func configFile(flag string) (path string, optional bool) {
	if flag != "" {
		return flag, false
	}
	return config.DefaultPath, true
}

const configFlagHelp = "config file (default " + config.DefaultPath + " if it exists, else built-in defaults)"

func runPlan(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("plan", flag.ContinueOnError)
	fl.SetOutput(stderr)
	cfgPath := fl.String("config", "", configFlagHelp)
	sysfs := fl.String("sysfs", "/sys", "sysfs root to read")
	procfs := fl.String("procfs", "/proc", "procfs root to read")
	format := fl.String("format", "text", "output format: text or json")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "numairqd plan: unexpected argument %q\n", fl.Arg(0))
		return 2
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "numairqd plan: --format %q: want text or json\n", *format)
		return 2
	}
	load := config.Load
	path, optional := configFile(*cfgPath)
	if optional {
		load = config.LoadOrDefault
	}
	cfg, err := load(path)
	if err != nil {
		fmt.Fprintf(stderr, "numairqd plan: %v\n", err)
		return 1
	}
	// The daemon's own pipeline, without its memory of refused writes:
	// this command writes nothing, so the kernel has refused nothing yet.
	planned, err := state.Plan(state.Roots{Sys: *sysfs, Proc: *procfs}, cfg, nil)
	if err != nil {
		fmt.Fprintf(stderr, "numairqd plan: %v\n", err)
		return 1
	}
	p := planned.Plan
	for _, q := range p.Unplaced() {
		fmt.Fprintf(stderr, "numairqd plan: warning: IRQ %d (%s) could not be placed: %s\n", q.Number, q.Name, q.Reason)
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(p.Doc()); err != nil {
			fmt.Fprintf(stderr, "numairqd plan: %v\n", err)
			return 1
		}
		return 0
	}
	writePlanText(stdout, p)
	return 0
}

func writePlanText(w io.Writer, p *policy.Plan) {
	fmt.Fprintf(w, "Allowed CPUs: %s\n%s\n", orDash(p.Allowed.String()), p.Summary())
	for _, d := range p.Devices {
		name := d.PCI
		if name == "" {
			name = "(no PCI device)"
		}
		fmt.Fprintf(w, "\n%s  driver %s  interfaces %v  node %d  policy %s  mask %s  %s\n",
			name, orDash(d.Driver), d.Interfaces, d.Node, d.Policy, d.Mask, d.Rule)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  IRQ\tNAME\tQUEUE\tCURRENT -> PLANNED\tMANAGED\tREASON")
		for _, q := range d.IRQs {
			queue := "-"
			if q.Queue >= 0 {
				queue = fmt.Sprint(q.Queue)
			}
			planned := q.Planned.String()
			switch {
			case q.LeftAlone():
				planned = "(left alone)"
			case q.Planned.Equal(q.Current):
				planned = "= " + planned
			}
			managed := "no"
			if q.Managed {
				managed = "yes"
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s -> %s\t%s\t%s\n", q.Number, q.Name, queue, orDash(q.Current.String()), planned, managed, q.Reason)
		}
		tw.Flush()
	}
}
