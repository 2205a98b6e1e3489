package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
)

const configFlagHelp = "config file (default " + config.DefaultPath + " if it exists, else built-in defaults)"

func runPlan(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("plan", flag.ContinueOnError)
	cfgPath := fl.String("config", "", configFlagHelp)
	sysfs := fl.String("sysfs", "/sys", "sysfs root to read")
	procfs := fl.String("procfs", "/proc", "procfs root to read")
	etc := fl.String("etc", "/etc", "where irqbalance_env_file: auto looks for sysconfig/irqbalance and default/irqbalance")
	format := fl.String("format", "text", "output format: text or json")
	sample := fl.Duration("load-sample", 2*time.Second, "with balance: load, measure interrupt loads over this long first (0: plan without loads)")
	capturePath := fl.String("capture", "", captureFlagHelp)
	var devices deviceFilter
	fl.Var(&devices, "device", "show only devices whose PCI address, interface or driver matches glob `pattern` (repeatable)")
	if code, done := parseArgs(fl, args, stdout, stderr, format); done {
		return code
	}
	// Caught, so that an interrupted plan still removes a capture's tree.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	src, code := openSource(fl, *capturePath, *sysfs, *procfs, *etc, stderr)
	if src == nil {
		return code
	}
	defer src.Close()
	cfg, err := src.loadConfig(*cfgPath)
	if err != nil {
		return fail(stderr, "plan", err)
	}
	var bal policy.Balancing
	switch {
	case cfg.WantsLoad() && src.replay != nil:
		fmt.Fprintln(stderr, "numairqd plan: a capture is one instant, with no interval to measure loads over: planned without loads")
	case cfg.WantsLoad() && *sample > 0:
		l, err := sampleLoads(ctx, src, cfg, *sample)
		if err != nil {
			return fail(stderr, "plan", err)
		}
		bal = policy.Balancing{Loads: &l, MaxMoves: cfg.LoadBalance.MovesPerMinute,
			MinGain: cfg.LoadBalance.MinGain, MinDrop: cfg.LoadBalance.MinDrop, MinPeak: cfg.LoadBalance.MinPeak}
	}
	all, warnings, err := planOnce(src.roots, cfg, bal)
	if ctx.Err() != nil {
		return 130 // as a shell reports SIGINT
	}
	if err != nil {
		return fail(stderr, "plan", err)
	}
	p, err := selectDevices(all, devices)
	if err != nil {
		return fail(stderr, "plan", err)
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "numairqd plan: warning: %s\n", w)
	}
	for _, q := range p.Unplaced() {
		fmt.Fprintf(stderr, "numairqd plan: warning: IRQ %d (%s) could not be placed: %s\n", q.Number, q.Name, q.Reason)
	}
	return output(stdout, stderr, "plan", *format, p.Doc(), func(w io.Writer) { writePlanText(w, p) })
}

// planOnce is the daemon's read and plan of roots, with an empty
// memory: nothing written. The warnings are those the daemon logs at
// a config load: irqbalance's settings not followed, then the config's.
func planOnce(roots machine.Roots, cfg *config.Config, bal policy.Balancing) (*policy.Plan, []string, error) {
	m, err := machine.Read(roots, cfg)
	if err != nil {
		return nil, nil, err
	}
	fsys := inventory.FS{Proc: roots.Proc, Sys: roots.Sys}
	m.Inventory = m.Inventory.WithEffective(fsys.ReadEffective(movable(m.Inventory)))
	var possible cpumask.Mask
	if s, err := topology.NewFS(roots.Sys).ReadDetail(); err == nil {
		possible = s.Possible()
	}
	warnings := append(slices.Clone(m.Bans.Ignored), policy.Warnings(m.Inventory, cfg, possible)...)
	return policy.Compute(m.Snapshot, m.Inventory, cfg, m.ToolBans(), policy.Memory{}, bal), warnings, nil
}

// movable are the IRQs whose effective CPUs the plan shows, each with
// no mask: no write to verify, so no interrupt counts read.
func movable(inv *inventory.Inventory) map[int]cpumask.Mask {
	out := map[int]cpumask.Mask{}
	for _, q := range inv.IRQs {
		if q.Movable() {
			out[q.Number] = cpumask.Mask{}
		}
	}
	return out
}

// sampleLoads measures the loads over d in policy.MinIntervals equal
// intervals, the fewest the planner proposes a move from, or until ctx
// ends.
func sampleLoads(ctx context.Context, src *source, cfg *config.Config, d time.Duration) (load.Loads, error) {
	lc := load.Config{HalfLife: cfg.LoadBalance.HalfLife}
	if cfg.LoadBalance.QueueCounters != config.QueueCountersOff {
		lc.Queues = src.queues
	}
	s := load.NewSampler(load.FS{Proc: src.roots.Proc}, lc)
	l, err := s.Sample(time.Now())
	for range policy.MinIntervals {
		if err != nil || !apply.Sleep(ctx, d/policy.MinIntervals) {
			break
		}
		l, err = s.Sample(time.Now())
	}
	return l, err
}

func writePlanText(w io.Writer, p *policy.Plan) {
	fmt.Fprintf(w, "Allowed CPUs: %s\n", orDash(p.Allowed.String()))
	writeExcluded(w, p)
	fmt.Fprintln(w, p.Summary())
	writeStacking(w, p)
	writeWrapped(w, planLegend, "  ")
	loads := p.Balance != nil && p.Balance.Ready
	for _, d := range p.Devices {
		name := cmp.Or(d.PCI, "(no PCI device)")
		rule := d.Rule
		if d.Balance == config.BalanceLoad {
			rule = "balance load  " + rule
			if d.LoadSource != "" {
				rule = "balance load (" + d.LoadSource + ")  " + d.Rule
			}
		}
		fmt.Fprintf(w, "\n%s  driver %s  interfaces %v  node %d  policy %s  mask %s  %s\n",
			name, deviceDrivers(d), d.Interfaces, d.Node, d.Policy, d.Mask, rule)
		writeDeviceWhy(w, p, d)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		loadHead := ""
		if loads {
			loadHead = "LOAD\t"
		}
		fmt.Fprintf(tw, "  IRQ\tNAME\tQUEUE\tCURRENT -> PLANNED\tEFFECTIVE\tMANAGED\t%sREASON\n", loadHead)
		for _, q := range d.IRQs {
			planned := plannedText(q.Planned, q.LeftAlone(), !q.Planned.Equal(q.Current))
			managed := "no"
			if q.Managed {
				managed = "yes"
			}
			load := ""
			if loads {
				load = percent(q.Load) + "\t"
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s -> %s\t%s\t%s\t%s%s\n", q.Number, q.Name, intOrDash(q.Queue),
				orDash(q.Current.String()), planned, effective(q), managed, load, q.Reason)
		}
		tw.Flush()
		writeTxQueuesText(w, p, d)
		writeNAPIThreadsText(w, p, d)
	}
	if loads {
		writeBalanceText(w, p.Balance)
	}
}

// writeBalanceText shows the loads the plan used and what load
// balancing would move.
func writeBalanceText(w io.Writer, b *policy.BalanceView) {
	how := "measured irq+softirq time"
	if !b.TimeAccounting {
		how = "interrupt rates times an assumed cost (no irq time accounting)"
	}
	fmt.Fprintf(w, "\nInterrupt load per allowed CPU (%s), as planned:\n", how)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  CPU\tLOAD\tFIXED")
	for _, c := range b.CPUs {
		fmt.Fprintf(tw, "  %d\t%s\t%s\n", c.CPU, percent(c.Load), percent(c.Fixed))
	}
	tw.Flush()
	fmt.Fprintf(w, "Peak %s, mean %s, peak/mean %s; %s balanced by load\n", percent(b.Peak), percent(b.Mean), ratio(b.Peak, b.Mean), plural(b.Queues, "queue"))
	pr := b.Proposal
	if pr == nil {
		fmt.Fprintf(w, "No move: %s.\n", b.Still)
		return
	}
	fmt.Fprintf(w, "Load balancing would move %s: peak %s, peak/mean %s (%.0f%% lower peak; standard error of the drop %s):\n",
		plural(len(pr.Moves), "queue"), percent(pr.Peak), ratio(pr.Peak, pr.Mean), 100*pr.Gain, percent(pr.Noise))
	for _, m := range pr.Moves {
		fmt.Fprintf(w, "  %s queue %d (IRQs %v, load %s): CPU %d -> %d\n", m.PCI, m.Queue, m.IRQs, percent(m.Load), m.From, m.To)
	}
}

// effective is the IRQ's effective CPUs, "-" when not read, marked
// "(outside)" when outside a plan that writes nothing: the kernel has
// not made the move asked for.
func effective(q policy.IRQ) string {
	s := orDash(q.Effective.String())
	if !q.Effective.IsEmpty() && !q.LeftAlone() && q.Planned.Equal(q.Current) && !q.Effective.IsSubsetOf(q.Planned) {
		s += " (outside)"
	}
	return s
}

func percent(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func ratio(a, b float64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// onHost reports whether the roots are the running kernel's, the only
// ones netlink and ethtool describe, with pids of this pid namespace:
// /sys and /proc, or a sysfs and a procfs mounted elsewhere whose self
// is this process (a container's --procfs=/host/proc with the host's
// pid namespace). A fixture tree is neither.
func onHost(sysfs, procfs string) bool {
	if sysfs == "/sys" && procfs == "/proc" {
		return true
	}
	var ps, ss unix.Statfs_t
	if unix.Statfs(procfs, &ps) != nil || ps.Type != unix.PROC_SUPER_MAGIC ||
		unix.Statfs(sysfs, &ss) != nil || ss.Type != unix.SYSFS_MAGIC {
		return false
	}
	self, err := os.Readlink(filepath.Join(procfs, "self"))
	return err == nil && self == strconv.Itoa(os.Getpid())
}
