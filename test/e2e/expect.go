//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// What numairqd should do, derived from the Guest alone (not from the
// daemon's code), and readers for what it says it did: /metrics text
// and the plan JSON.

// Placement is where numairqd's default rule (policy auto) puts one
// virtio-net's IRQs.
type Placement struct {
	// Policy is "numa-hop" when the device has fewer queue pairs than
	// allowed CPUs, else "linear" (the MANA rule).
	Policy string
	// Queues[k] is the CPU of queue pair k (input.k and output.k).
	Queues []int
	// Control is the config IRQ's list: the allowed CPUs nearest the
	// device's node.
	Control []int
}

// QueueArg is Queues as guestcheck wait-placement's -queues takes it.
func (p Placement) QueueArg() string {
	s := make([]string, len(p.Queues))
	for i, c := range p.Queues {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, " ")
}

// ControlList is Control in the kernel's list format.
func (p Placement) ControlList() string { return listOf(p.Control) }

// NetPlacement is where numairqd must put Net[i]'s IRQs when allowed
// are the CPUs it may use: numa-hop puts queue k on the k-th CPU of the
// device node's spread order over the allowed CPUs (wrapping); linear
// puts it on the (k mod n)-th allowed CPU in id order. It assumes the
// guest has no other device with movable queue IRQs (NVMe queues are
// managed), so no CPU carries another device's load. Alone, a numa-hop
// device is placed as its driver would spread it (DriverQueues): with
// fewer queues than allowed CPUs that spread has one queue pair a CPU,
// and in these guests, where each vCPU is a core and each node an LLC,
// it stacks no core or LLC more than the placement objective must
// within its distance bound. With several such devices the objective
// admits more than one placement, and a scenario checks its bound
// instead (twonic_test.go).
func (g Guest) NetPlacement(i int, allowed []int) Placement {
	d := g.Net[i]
	allowed = slices.Sorted(slices.Values(allowed))
	p := Placement{Policy: "numa-hop", Control: g.nearest(d.Node, allowed)}
	order := g.Spread(d.Node, allowed)
	if d.Node < 0 {
		order = allowed
	}
	if d.Queues >= len(allowed) {
		p.Policy, order = "linear", allowed
	}
	if len(order) == 0 {
		return p
	}
	for k := range d.Queues {
		p.Queues = append(p.Queues, order[k%len(order)])
	}
	return p
}

// DriverQueues is where the drivers' own per-device spread puts
// Net[i]'s queue pairs over the CPUs online, the device alone: queue k
// on the k-th CPU of its node's spread order (Guest.Spread), wrapping,
// as a driver's for_each_numa_hop_mask loop does; id order for a
// device on no node. For numa-hop devices it bounds numairqd's
// placement: no queue farther from its device's node than here and, the
// devices' spreads summed, no more queue IRQs on one CPU.
func (g Guest) DriverQueues(i int, online []int) []int {
	d := g.Net[i]
	order := slices.Sorted(slices.Values(online))
	if d.Node >= 0 {
		order = g.Spread(d.Node, order)
	}
	if len(order) == 0 {
		return nil
	}
	out := make([]int, d.Queues)
	for k := range out {
		out[k] = order[k%len(order)]
	}
	return out
}

// nearest is the allowed CPUs at the smallest distance from node; all
// of them for no node.
func (g Guest) nearest(node int, allowed []int) []int {
	if node < 0 {
		return allowed
	}
	best, out := -1, []int(nil)
	for _, c := range allowed {
		d := g.Dist(node, g.NodeOf(c))
		switch {
		case best < 0 || d < best:
			best, out = d, []int{c}
		case d == best:
			out = append(out, c)
		}
	}
	return out
}

// without returns cpus less drop.
func without(cpus []int, drop ...int) []int {
	var out []int
	for _, c := range cpus {
		if !slices.Contains(drop, c) {
			out = append(out, c)
		}
	}
	return out
}

// allCPUs is 0..n-1.
func allCPUs(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func listOf(cpus []int) string { return cpumask.New(cpus...).String() }

// promSample is one line of the Prometheus text format.
type promSample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// parseProm reads the text exposition format's samples; comments and
// lines it cannot read are skipped (the host checks what it needs).
func parseProm(text string) []promSample {
	var out []promSample
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s := promSample{Labels: map[string]string{}}
		rest := line
		if i := strings.IndexAny(line, "{ "); i >= 0 && line[i] == '{' {
			s.Name = line[:i]
			j := strings.LastIndex(line, "}")
			if j < i {
				continue
			}
			if !parseLabels(line[i+1:j], s.Labels) {
				continue
			}
			rest = strings.TrimSpace(line[j+1:])
		} else {
			name, v, ok := strings.Cut(line, " ")
			if !ok {
				continue
			}
			s.Name, rest = name, strings.TrimSpace(v)
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		s.Value = v
		out = append(out, s)
	}
	return out
}

// parseLabels reads `a="x",b="y\"z"`.
func parseLabels(s string, into map[string]string) bool {
	for s != "" {
		k, rest, ok := strings.Cut(s, "=")
		if !ok || !strings.HasPrefix(rest, `"`) {
			return false
		}
		var v strings.Builder
		i := 1
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
				switch rest[i] {
				case 'n':
					v.WriteByte('\n')
				default:
					v.WriteByte(rest[i])
				}
				continue
			}
			v.WriteByte(rest[i])
		}
		if i >= len(rest) {
			return false
		}
		into[strings.TrimSpace(k)] = v.String()
		s = strings.TrimPrefix(strings.TrimSpace(rest[i+1:]), ",")
	}
	return true
}

// promFind returns the samples named name whose labels include want.
func promFind(samples []promSample, name string, want map[string]string) []promSample {
	var out []promSample
	for _, s := range samples {
		if s.Name != name {
			continue
		}
		ok := true
		for k, v := range want {
			if s.Labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// promValue is the value of the one sample named name with labels
// want; ok is false when there is none or more than one.
func promValue(samples []promSample, name string, want map[string]string) (float64, bool) {
	m := promFind(samples, name, want)
	if len(m) != 1 {
		return 0, false
	}
	return m[0].Value, true
}

// planDoc is the documented part of `numairqd plan --format json` and
// /plan: the keys scripts may rely on.
type planDoc struct {
	Allowed string `json:"allowed"`
	// Stacking and DriversStacking are the most queue IRQs on one CPU
	// (core, LLC) as planned and in the drivers' own spreads.
	Stacking        planStacking `json:"stacking"`
	DriversStacking planStacking `json:"drivers_stacking"`
	Devices         []struct {
		PCI    string `json:"pci"`
		Driver string `json:"driver"`
		Node   int    `json:"node"`
		Policy string `json:"policy"`
		IRQs   []struct {
			IRQ     int    `json:"irq"`
			Name    string `json:"name"`
			Queue   *int   `json:"queue"`
			Managed bool   `json:"managed"`
			Current string `json:"current"`
			Planned string `json:"planned"`
			// DriversCPU is where the drivers' own spread puts the
			// queue, -1 for no placed queue IRQ; nil when absent.
			DriversCPU *int `json:"drivers_cpu"`
		} `json:"irqs"`
	} `json:"devices"`
}

// planStacking is a plan's stacking or drivers_stacking.
type planStacking struct {
	CPU  int `json:"cpu"`
	Core int `json:"core"`
	LLC  int `json:"llc"`
}

func decodePlan(b []byte) (planDoc, error) {
	var p planDoc
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("plan JSON: %w: %.200s", err, b)
	}
	if dec.More() {
		return p, fmt.Errorf("plan JSON: trailing data after the object: %.200s", b)
	}
	return p, nil
}

// checkPlanned compares a plan's device at pci with want: every queue
// IRQ planned on want.Queues[queue], the config IRQ on want.Control.
// It returns "" when they agree.
func (p planDoc) checkPlanned(pci string, want Placement) string {
	var diffs []string
	found := false
	for _, d := range p.Devices {
		if d.PCI != pci {
			continue
		}
		found = true
		if d.Policy != want.Policy {
			diffs = append(diffs, fmt.Sprintf("policy %s want %s", d.Policy, want.Policy))
		}
		queues := 0
		for _, q := range d.IRQs {
			switch {
			case q.Queue != nil:
				queues++
				if *q.Queue >= len(want.Queues) {
					diffs = append(diffs, fmt.Sprintf("irq %d %s: unexpected queue %d", q.IRQ, q.Name, *q.Queue))
				} else if w := strconv.Itoa(want.Queues[*q.Queue]); q.Planned != w {
					diffs = append(diffs, fmt.Sprintf("irq %d %s planned %q want %s", q.IRQ, q.Name, q.Planned, w))
				}
			case strings.HasSuffix(q.Name, "-config"):
				if w := want.ControlList(); q.Planned != w {
					diffs = append(diffs, fmt.Sprintf("irq %d %s planned %q want %s", q.IRQ, q.Name, q.Planned, w))
				}
			}
		}
		if queues != 2*len(want.Queues) {
			diffs = append(diffs, fmt.Sprintf("%d queue IRQs, want %d", queues, 2*len(want.Queues)))
		}
	}
	if !found {
		return "no device " + pci + " in the plan"
	}
	return strings.Join(diffs, "; ")
}
