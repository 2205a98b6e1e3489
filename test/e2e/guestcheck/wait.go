package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// waitUsage documents the wait-placement subcommand.
const waitUsage = `guestcheck wait-placement -pci ADDR -queues "CPU0 CPU1 ..." [flags]
  Starts a clock, does the -write, -exec and -signal actions in order, then
  polls the device's msi_irqs and /proc/irq/N/smp_affinity_list until every
  queue pair K of the device at ADDR (IRQs named *-input.K and
  *-output.K) is on CPU K of -queues and, with -control, its *-config
  IRQ's list is -control. Prints one line:
    OK ms=M polls=N write_ms=W irqs=IRQ:LIST,... first=IRQ:LIST,...
                                                     placed within -timeout and held for
                                                     -hold; first is the first complete
                                                     set of the device's IRQs seen
    UNSTABLE ms=M changed_ms=C ...                   placed, then changed during -hold
    TIMEOUT ms=M ... last: WHAT DIFFERED             not placed within -timeout
    ERROR ms=M ...                                   an action failed
  and exits 0 only for OK. M is the time from the clock's start (or
  from -since, a /proc/uptime value) to the first poll that matched: a
  figure to report, never a verdict (a slow host is not a failure).`

// waitSpec is what wait-placement waits for.
type waitSpec struct {
	pci     string
	queues  []int  // queue K must be on CPU queues[K]
	control string // the config IRQ's smp_affinity_list; "" not checked
}

// deviceIRQ is one IRQ of the watched device as /proc/interrupts names it.
type deviceIRQ struct {
	irq   int
	name  string
	queue int // -1 for a non-queue IRQ
	list  string
}

var (
	queueName  = regexp.MustCompile(`-(?:input|output)\.(\d+)$`)
	configName = regexp.MustCompile(`-config$`)
)

// readDeviceIRQs lists the requested IRQs of the PCI device pci (its
// sys/bus/pci/devices/<pci>/msi_irqs; none while no driver has MSI
// enabled) with their action name and smp_affinity_list. An IRQ that
// has no action, or disappears while being read, is skipped.
func readDeviceIRQs(root, pci string) ([]deviceIRQ, error) {
	ents, err := os.ReadDir(filepath.Join(root, "sys/bus/pci/devices", pci, "msi_irqs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []deviceIRQ
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join(root, "proc/irq", e.Name())
		sub, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		q := deviceIRQ{irq: n, queue: -1}
		for _, a := range sub {
			if a.IsDir() {
				q.name = a.Name()
				break
			}
		}
		if q.name == "" {
			continue
		}
		if m := queueName.FindStringSubmatch(q.name); m != nil {
			q.queue, _ = strconv.Atoi(m[1])
		}
		l, err := os.ReadFile(filepath.Join(dir, "smp_affinity_list"))
		if err != nil {
			continue
		}
		q.list = strings.TrimSpace(string(l))
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].irq < out[j].irq })
	return out, nil
}

// mismatch returns "" when irqs are placed as spec says, else what
// differs, for the TIMEOUT line; complete tells whether every IRQ spec
// names exists.
func (spec waitSpec) mismatch(irqs []deviceIRQ) (diff string, complete bool) {
	var diffs, missing []string
	seen := map[string]bool{}
	control := false
	for _, q := range irqs {
		switch {
		case q.queue >= 0:
			kind := "in"
			if strings.Contains(q.name, "-output.") {
				kind = "out"
			}
			seen[kind+strconv.Itoa(q.queue)] = true
			if q.queue >= len(spec.queues) {
				diffs = append(diffs, fmt.Sprintf("irq %d %s: queue %d not expected", q.irq, q.name, q.queue))
				continue
			}
			if want := strconv.Itoa(spec.queues[q.queue]); q.list != want {
				diffs = append(diffs, fmt.Sprintf("irq %d %s on %s want %s", q.irq, q.name, q.list, want))
			}
		case configName.MatchString(q.name):
			control = true
			if spec.control != "" && q.list != spec.control {
				diffs = append(diffs, fmt.Sprintf("irq %d %s on %s want %s", q.irq, q.name, q.list, spec.control))
			}
		}
	}
	for k := range spec.queues {
		for _, kind := range []string{"in", "out"} {
			if !seen[kind+strconv.Itoa(k)] {
				missing = append(missing, fmt.Sprintf("no %sput.%d IRQ", kind, k))
			}
		}
	}
	if spec.control != "" && !control {
		missing = append(missing, "no config IRQ")
	}
	return strings.Join(append(missing, diffs...), "; "), len(missing) == 0
}

func summary(irqs []deviceIRQ) string {
	var b strings.Builder
	for i, q := range irqs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d:%s", q.irq, q.list)
	}
	return b.String()
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// boottime is CLOCK_BOOTTIME, the clock of /proc/uptime.
func boottime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

func waitPlacement(root string, args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("wait-placement", flag.ContinueOnError)
	fl.SetOutput(os.Stderr)
	fl.Usage = func() { fmt.Fprintln(os.Stderr, waitUsage) }
	var spec waitSpec
	var writes listFlag
	queues := fl.String("queues", "", "expected CPU of each queue pair, space or comma separated")
	fl.StringVar(&spec.pci, "pci", "", "PCI address of the device")
	fl.StringVar(&spec.control, "control", "", "expected smp_affinity_list of the config IRQ")
	fl.Var(&writes, "write", "PATH=VALUE to write after the clock starts (repeatable, in order)")
	var execs listFlag
	fl.Var(&execs, "exec", "shell command to run after the writes, which must exit 0 (repeatable, in order)")
	signal := fl.Int("signal", 0, "PID to send SIGHUP after the writes")
	since := fl.Float64("since", 0, "start the clock at this /proc/uptime value instead of now")
	timeout := fl.Duration("timeout", 5*time.Second, "give up after this long")
	hold := fl.Duration("hold", 0, "placement must then stay unchanged this long")
	poll := fl.Duration("poll", 5*time.Millisecond, "poll interval")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if spec.pci == "" {
		return badUsage(waitUsage, "wait-placement: -pci is required")
	}
	if fl.NArg() > 0 {
		return badUsage(waitUsage, "wait-placement: unexpected argument %q", fl.Arg(0))
	}
	for _, f := range strings.FieldsFunc(*queues, func(r rune) bool { return r == ' ' || r == ',' }) {
		c, err := strconv.Atoi(f)
		if err != nil {
			return fmt.Errorf("-queues %q: %w", *queues, err)
		}
		spec.queues = append(spec.queues, c)
	}
	if spec.control != "" {
		// Normalise to the kernel's list format ("4,5" -> "4-5").
		m, err := cpumask.ParseList(spec.control)
		if err != nil {
			return fmt.Errorf("-control %q: %w", spec.control, err)
		}
		spec.control = m.String()
	}

	start := boottime()
	if *since > 0 {
		start = time.Duration(*since * float64(time.Second))
	}
	elapsed := func() time.Duration { return boottime() - start }
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
	}

	wStart := boottime()
	for _, w := range writes {
		p, v, ok := strings.Cut(w, "=")
		if !ok {
			return fmt.Errorf("-write %q: want PATH=VALUE", w)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0); err != nil {
			fmt.Fprintf(stdout, "ERROR ms=%s write %s=%s: %v\n", ms(elapsed()), p, v, err)
			return errReported
		}
	}
	for _, c := range execs {
		if out, err := exec.Command("/bin/sh", "-c", c).CombinedOutput(); err != nil {
			fmt.Fprintf(stdout, "ERROR ms=%s exec %q: %v: %s\n", ms(elapsed()), c, err, strings.Join(strings.Fields(string(out)), " "))
			return errReported
		}
	}
	writeTook := boottime() - wStart
	if *signal > 0 {
		if err := syscall.Kill(*signal, syscall.SIGHUP); err != nil {
			fmt.Fprintf(stdout, "ERROR ms=%s kill -HUP %d: %v\n", ms(elapsed()), *signal, err)
			return errReported
		}
	}

	var (
		polls   int
		matched time.Duration = -1
		placed  string
		first   string // the first complete set of IRQs seen
		last    string
	)
	for {
		polls++
		irqs, err := readDeviceIRQs(root, spec.pci)
		now := elapsed()
		complete := false
		if err != nil {
			last = err.Error()
		} else {
			last, complete = spec.mismatch(irqs)
		}
		if complete && first == "" {
			first = summary(irqs)
		}
		switch {
		case matched < 0 && last == "":
			matched, placed = now, summary(irqs)
		case matched >= 0 && last != "":
			fmt.Fprintf(stdout, "UNSTABLE ms=%s changed_ms=%s polls=%d write_ms=%s placed=%s then: %s\n",
				ms(matched), ms(now), polls, ms(writeTook), placed, last)
			return errReported
		}
		if matched >= 0 && now-matched >= *hold {
			fmt.Fprintf(stdout, "OK ms=%s polls=%d write_ms=%s hold_ms=%s irqs=%s first=%s\n",
				ms(matched), polls, ms(writeTook), ms(now-matched), placed, first)
			return nil
		}
		if matched < 0 && now >= *timeout {
			fmt.Fprintf(stdout, "TIMEOUT ms=%s polls=%d write_ms=%s first=%s last: %s\n", ms(now), polls, ms(writeTook), first, last)
			return errReported
		}
		time.Sleep(*poll)
	}
}
