package guestinfo

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// TxQueue is one transmit queue of a multi-queue NIC: its XPS mask and
// the IRQ its completions fire on (virtio-net's virtioN-output.K).
type TxQueue struct {
	Index int `json:"index"`
	// XPS is the CPUs of queues/tx-K/xps_cpus, in list format.
	XPS string `json:"xps_cpus"`
	IRQ int    `json:"irq"` // -1 when the device has no output.K IRQ
	// Effective is the completion IRQ's effective_affinity_list: where
	// it fires (x86 delivers to one CPU of the affinity).
	Effective string `json:"effective_affinity_list"`
	// Aligned is true when every CPU of Effective is in XPS: a CPU that
	// sends on this queue by XPS is the one its completions reach.
	Aligned bool `json:"aligned"`
}

// XPSReport is how a NIC's transmit steering matches its completion
// IRQs: the data path of issue 27.
type XPSReport struct {
	Iface  string    `json:"iface"`
	Queues []TxQueue `json:"queues"`
	// Uncovered are the online CPUs in no tx queue's XPS mask: a
	// sender there gets a queue by hash, wherever its IRQ is.
	Uncovered []int    `json:"uncovered"`
	Errors    []string `json:"errors,omitempty"`
}

// Aligned counts the queues whose completion IRQ is in their XPS mask.
func (r XPSReport) Aligned() int {
	n := 0
	for _, q := range r.Queues {
		if q.Aligned {
			n++
		}
	}
	return n
}

// OK is true when every queue is aligned, every online CPU is covered
// and nothing failed to read.
func (r XPSReport) OK() bool {
	return len(r.Queues) > 0 && r.Aligned() == len(r.Queues) && len(r.Uncovered) == 0 && len(r.Errors) == 0
}

// String is one line: "aligned 6/6 uncovered [] tx-0 xps 4 irq 41 on 4 ...".
func (r XPSReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s aligned %d/%d uncovered %v", r.Iface, r.Aligned(), len(r.Queues), r.Uncovered)
	for _, q := range r.Queues {
		fmt.Fprintf(&b, "; tx-%d xps %q irq %d on %q", q.Index, q.XPS, q.IRQ, q.Effective)
	}
	if len(r.Errors) > 0 {
		fmt.Fprintf(&b, "; errors %v", r.Errors)
	}
	return b.String()
}

// outputIRQ matches virtio-net's transmit completion IRQ, virtioN-output.K.
var outputIRQ = regexp.MustCompile(`^virtio\d+-output\.(\d+)$`)

// OutputQueue returns K of a virtioN-output.K action, or -1.
func OutputQueue(action string) int {
	m := outputIRQ.FindStringSubmatch(action)
	if m == nil {
		return -1
	}
	k, _ := strconv.Atoi(m[1])
	return k
}

// XPS reports the network device backed by the PCI function pci: each
// tx queue's XPS mask against the effective affinity of its completion
// IRQ (one of the function's MSI IRQs named virtioN-output.K).
func (s State) XPS(pci string) XPSReport {
	var r XPSReport
	var nd *NetDevice
	for i := range s.Net {
		if s.Net[i].PCI == pci {
			nd = &s.Net[i]
		}
	}
	dev, ok := s.PCIDevice(pci)
	if nd == nil || !ok {
		r.Errors = append(r.Errors, "no network device at "+pci)
		return r
	}
	r.Iface = nd.Name
	irqs := map[int]IRQ{}
	for _, q := range s.IRQs {
		if !slices.Contains(dev.MSIIRQs, q.Number) {
			continue
		}
		for _, a := range q.Actions {
			if k := OutputQueue(a); k >= 0 {
				irqs[k] = q
			}
		}
	}
	var covered cpumask.Builder
	for k, hex := range nd.XPS {
		q := TxQueue{Index: k, IRQ: -1}
		xps, err := cpumask.ParseHex(hex)
		if err != nil {
			r.Errors = append(r.Errors, fmt.Sprintf("%s tx-%d xps_cpus %q: %v", nd.Name, k, hex, err))
		}
		covered.Or(xps)
		q.XPS = xps.String()
		if irq, ok := irqs[k]; ok {
			q.IRQ, q.Effective = irq.Number, irq.Effective
			eff, err := cpumask.ParseList(irq.Effective)
			q.Aligned = err == nil && !eff.IsEmpty() && eff.IsSubsetOf(xps)
		}
		r.Queues = append(r.Queues, q)
	}
	all := covered.Mask()
	for _, c := range s.Online {
		if !all.Contains(c) {
			r.Uncovered = append(r.Uncovered, c)
		}
	}
	return r
}

// NodeOf is the node holding cpu, -1 if none does.
func (s State) NodeOf(cpu int) int {
	for _, n := range s.Nodes {
		if slices.Contains(n.CPUs, cpu) {
			return n.ID
		}
	}
	return -1
}

// Distance is the NUMA distance between the nodes of CPUs a and b, -1
// when the state does not say.
func (s State) Distance(a, b int) int {
	na, nb := s.NodeOf(a), s.NodeOf(b)
	for _, n := range s.Nodes {
		if n.ID == na && nb >= 0 && nb < len(n.Distance) {
			return n.Distance[nb]
		}
	}
	return -1
}

// CompletionTargets is where a sender on cpu must see its transmit
// completions when XPS follows the IRQ placement: on cpu itself when a
// tx queue's completion IRQ fires there, else on the CPUs holding
// completion IRQs at the smallest NUMA distance from it.
func (s State) CompletionTargets(r XPSReport, cpu int) []int {
	var holders []int
	for _, q := range r.Queues {
		if eff, err := cpumask.ParseList(q.Effective); err == nil {
			holders = append(holders, eff.CPUs()...)
		}
	}
	if slices.Contains(holders, cpu) {
		return []int{cpu}
	}
	best, out := -1, []int(nil)
	for _, c := range holders {
		switch d := s.Distance(cpu, c); {
		case d < 0:
		case best < 0 || d < best:
			best, out = d, []int{c}
		case d == best && !slices.Contains(out, c):
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}
