// Command benchagent is the bench's guest agent: a static binary in the
// initramfs that performs a CPU hotplug or driver re-bind and polls the
// virtio-net queue IRQs' affinities until the running daemon has
// answered, printing one measure.Watch as JSON.
//
//	benchagent settle [--changed] [--quiet D] [--max D]
//	    wait until the map has not changed for --quiet and is none of
//	    the driver's maps seen so far (with --changed: after it first
//	    differs from the map at start, which is the driver's)
//	benchagent watch --event offline:CPU|online:CPU|rebind:PCI|exec:SHELL
//	    [--until changed|irqbalance|none] [--quiet D] [--window D]
//	    do the event, then poll until --until holds for --quiet or the
//	    window ends
//	benchagent floor [--max D] [--plan FILE]...
//	    the floor of a round after a CPU event (see floor): prints
//	    "ready: ..." once it listens, and a measure.FloorSummary as JSON
//	    when it stops, on SIGTERM or after --max
//
// Between runs it keeps the last map and when it last changed in
// /tmp/benchagent.json, so that settle counts quiet time across calls.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/numairqd/numairqd/bench/measure"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

const stateFile = "/tmp/benchagent.json"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "benchagent:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: benchagent settle|watch|floor [flags]")
	}
	fl := flag.NewFlagSet(args[0], flag.ContinueOnError)
	quiet := fl.Duration("quiet", 3*time.Second, "how long the map must stay unchanged")
	window := fl.Duration("window", 30*time.Second, "give up after this long (watch)")
	maxWait := fl.Duration("max", 60*time.Second, "give up after this long (settle); stop after this long (floor)")
	interval := fl.Duration("interval", 50*time.Millisecond, "poll interval")
	event := fl.String("event", "", "offline:CPU, online:CPU, rebind:PCI or exec:SHELL (watch)")
	until := fl.String("until", "changed", "changed, irqbalance or none (watch)")
	changed := fl.Bool("changed", false, "settle: wait for a first change before counting quiet time")
	var plans planFlag
	fl.Var(&plans, "plan", "floor: a `numairqd plan --format json` file to write the targets of (repeatable: one per online CPU set)")
	if err := fl.Parse(args[1:]); err != nil {
		return err
	}
	if args[0] == "floor" {
		return floor(*maxWait, plans)
	}
	p := poller{interval: *interval, r: new(kernfs.Reader)}
	var w measure.Watch
	var err error
	switch args[0] {
	case "settle":
		w, err = p.settle(*quiet, *maxWait, *changed)
	case "watch":
		w, err = p.watch(*event, *until, *quiet, *window)
	default:
		return fmt.Errorf("unknown command %q", args[0])
	}
	if err != nil {
		return err
	}
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	fmt.Printf("%s\n", b)
	return nil
}

// planFlag collects the floor's --plan files.
type planFlag []string

func (p *planFlag) String() string     { return strings.Join(*p, ",") }
func (p *planFlag) Set(v string) error { *p = append(*p, v); return nil }

type poller struct {
	interval time.Duration
	r        *kernfs.Reader
}

// read returns the virtio-net queue IRQs' smp_affinity_list by
// normalised name. It reads nothing else: under TCG a poll that also
// read effective_affinity_list through os.ReadFile took about 60 ms,
// which with the 50 ms sleep left a reaction resolution near 0.1 s, the
// very figure measured. The effective lists are in the placement tables
// (guestcheck state).
func (p poller) read() measure.Map {
	aff := measure.Map{}
	b, err := os.ReadFile("/proc/interrupts")
	if err != nil {
		return aff
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		name, _, ok := measure.QueueName(f[len(f)-1])
		if !ok {
			continue
		}
		irq := strings.TrimSuffix(f[0], ":")
		if a, err := p.r.Read("/proc/irq/" + irq + "/smp_affinity_list"); err == nil {
			aff[name] = string(a)
		}
	}
	return aff
}

func onlineCPUs() []int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil
	}
	m, err := cpumask.ParseList(strings.TrimSpace(string(b)))
	if err != nil {
		return nil
	}
	return m.CPUs()
}

// saved is what one run leaves for the next: the last map, when it
// last changed, and the driver's own maps seen so far (the map at the
// first settle, after boot, and each watch's baseline), which a settle
// does not accept as a daemon's placement.
type saved struct {
	Aff        measure.Map   `json:"aff"`
	LastChange int64         `json:"last_change_unix_ns"`
	Driver     []measure.Map `json:"driver"`
}

func loadSaved() (saved, bool) {
	var s saved
	b, err := os.ReadFile(stateFile)
	if err != nil || json.Unmarshal(b, &s) != nil {
		return s, false
	}
	return s, true
}

func save(aff measure.Map, last time.Time, driver []measure.Map) {
	b, _ := json.Marshal(saved{Aff: aff, LastChange: last.UnixNano(), Driver: driver})
	_ = os.WriteFile(stateFile, b, 0o644)
}

func isDriverMap(m measure.Map, driver []measure.Map) bool {
	for _, d := range driver {
		if m.Equal(d) {
			return true
		}
	}
	return false
}

// recorder keeps the samples where the map changed.
type recorder struct {
	t0         time.Time
	w          *measure.Watch
	aff        measure.Map
	lastChange time.Time
}

func (r *recorder) poll(p poller) {
	aff := p.read()
	now := time.Now()
	r.w.Polls++
	if r.aff == nil || !aff.Equal(r.aff) {
		r.lastChange = now
		r.aff = aff
		r.w.Samples = append(r.w.Samples, measure.Sample{T: now.Sub(r.t0).Seconds(), Affinity: aff})
	}
	r.w.EndS = now.Sub(r.t0).Seconds()
}

func (p poller) settle(quiet, maxWait time.Duration, needChange bool) (measure.Watch, error) {
	w := measure.Watch{Event: "settle", Online: onlineCPUs()}
	r := &recorder{t0: time.Now(), w: &w}
	r.poll(p)
	w.Pre, w.Baseline = r.aff, r.aff
	s, ok := loadSaved()
	if ok && s.Aff.Equal(r.aff) && !needChange {
		r.lastChange = time.Unix(0, s.LastChange)
	}
	if needChange {
		s.Driver = append(s.Driver, w.Pre)
	}
	seenChange := !needChange
	for {
		if !seenChange && !r.aff.Equal(w.Pre) {
			seenChange = true
		}
		if seenChange && time.Since(r.lastChange) >= quiet && !isDriverMap(r.aff, s.Driver) {
			w.Stop = "quiet"
			break
		}
		if time.Since(r.t0) >= maxWait {
			w.Stop = "max"
			break
		}
		time.Sleep(p.interval)
		r.poll(p)
	}
	save(r.aff, r.lastChange, s.Driver)
	return w, nil
}

func doEvent(event string) (newCPUs []int, err error) {
	kind, arg, ok := strings.Cut(event, ":")
	if !ok {
		return nil, fmt.Errorf("--event %q: want KIND:ARG", event)
	}
	write := func(path, val string) error {
		if err := os.WriteFile(path, []byte(val), 0o200); err != nil {
			return fmt.Errorf("write %q to %s: %w", val, path, err)
		}
		return nil
	}
	switch kind {
	case "offline", "online":
		cpu, err := strconv.Atoi(arg)
		if err != nil {
			return nil, fmt.Errorf("--event %q: %w", event, err)
		}
		val := "0"
		if kind == "online" {
			val, newCPUs = "1", []int{cpu}
		}
		return newCPUs, write(fmt.Sprintf("/sys/devices/system/cpu/cpu%d/online", cpu), val)
	case "exec":
		// A shell command is the event (the bans case: files written as
		// cri-o writes them, and for irqbalance the one-shot it runs).
		if out, err := exec.Command("/bin/sh", "-c", arg).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("--event exec %q: %w: %s", arg, err, bytes.TrimSpace(out))
		}
		return nil, nil
	case "rebind":
		if err := write("/sys/bus/pci/drivers/virtio-pci/unbind", arg); err != nil {
			return nil, err
		}
		return nil, write("/sys/bus/pci/drivers/virtio-pci/bind", arg)
	}
	return nil, fmt.Errorf("--event %q: unknown kind", event)
}

func (p poller) watch(event, until string, quiet, window time.Duration) (measure.Watch, error) {
	w := measure.Watch{Event: event, PreCPUs: onlineCPUs()}
	w.Pre = p.read()
	start := time.Now()
	newCPUs, err := doEvent(event)
	if err != nil {
		return w, err
	}
	r := &recorder{t0: time.Now(), w: &w}
	w.EventS = r.t0.Sub(start).Seconds()
	w.NewCPUs = newCPUs
	w.Online = onlineCPUs()
	r.poll(p)
	w.Baseline = r.aff
	set := measure.IrqbalanceSet(w.Pre, w.Online, w.NewCPUs)
	done := func() bool {
		switch until {
		case "changed":
			// Changed since the first poll, or already at the first
			// poll: a daemon can place everything while the event's
			// write is still returning (numairqd after a CPU offline).
			return !r.aff.Equal(w.Baseline) || !r.aff.Equal(w.Pre)
		case "irqbalance":
			return r.aff.Within(w.Pre, set) && (!r.aff.Equal(w.Baseline) || w.Baseline.Equal(w.Pre))
		}
		return false
	}
	for {
		if done() && time.Since(r.lastChange) >= quiet {
			w.Stop = "quiet"
			break
		}
		if time.Since(r.t0) >= window {
			w.Stop = "window"
			break
		}
		time.Sleep(p.interval)
		r.poll(p)
	}
	s, _ := loadSaved()
	driver := append(s.Driver, w.Baseline)
	if until == "changed" && w.Stop == "quiet" && r.aff.Equal(w.Baseline) {
		// numairqd's placement was there at the first poll (it often
		// places before the event's write returns): the baseline is
		// its map, which the next settle must accept, not the driver's.
		driver = s.Driver
	}
	save(r.aff, r.lastChange, driver)
	return w, nil
}
