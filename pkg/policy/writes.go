package policy

import (
	"strconv"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// WriteKind is what a Write sets.
type WriteKind uint8

const (
	WriteIRQAffinity WriteKind = iota // /proc/irq/N/smp_affinity_list
	WriteXPS                          // /sys/class/net/IF/queues/tx-N/xps_cpus
	WriteNAPIThread                   // a NAPI kthread's sched_setaffinity
)

var writeKindNames = [...]string{"irq_affinity", "xps", "napi_thread"}

// String names the kind for logs and metrics.
func (k WriteKind) String() string {
	if int(k) < len(writeKindNames) {
		return writeKindNames[k]
	}
	return "write_kind(" + strconv.Itoa(int(k)) + ")"
}

// Write is one change the plan asks of the kernel.
type Write struct {
	Kind   WriteKind
	IRQ    int    // the IRQ, or the one the tx queue or thread follows
	Name   string // the IRQ's name, "IF tx-N" or the thread's name
	Device string // its device's PCI address ("" for none)
	// Interface and Queue (-1: unknown) are the tx queue's or thread's.
	Interface     string
	Queue         int
	PID           int // the thread of a WriteNAPIThread
	Before, After cpumask.Mask
}

// Writes lists in plan order each device's IRQs to write, then its tx
// queues (XPSDiffers), then its NAPI kthreads (NAPIThreadDiffers).
func (p *Plan) Writes() []Write {
	var out []Write
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			if q.wantsWrite() {
				out = append(out, Write{Kind: WriteIRQAffinity, IRQ: q.Number, Name: q.Name, Device: d.PCI, Before: q.Current, After: q.Planned})
			}
		}
		for _, t := range d.TxQueues {
			if p.XPSDiffers(t) {
				out = append(out, Write{Kind: WriteXPS, IRQ: t.IRQ, Name: t.Interface + " tx-" + strconv.Itoa(t.Queue), Device: d.PCI,
					Interface: t.Interface, Queue: t.Queue, Before: t.Current, After: t.Planned})
			}
		}
		for _, t := range d.NAPIThreads {
			if p.NAPIThreadDiffers(t) {
				out = append(out, Write{Kind: WriteNAPIThread, IRQ: t.IRQ, Name: t.Comm, Device: d.PCI,
					Interface: t.Interface, Queue: t.Queue, PID: t.PID, Before: t.Current, After: t.Planned})
			}
		}
	}
	return out
}

// XPSDiffers reports whether t's planned map differs on the online CPUs.
func (p *Plan) XPSDiffers(t TxQueue) bool {
	return !t.LeftAlone() && !t.Planned.Equal(t.Current.And(p.online))
}

// NAPIThreadDiffers reports whether t's planned CPUs differ on online ones.
func (p *Plan) NAPIThreadDiffers(t NAPIThread) bool {
	return !t.LeftAlone() && !t.Planned.Equal(t.Current.And(p.online))
}

// Unchanged counts the placed IRQs that need no write.
func (p *Plan) Unchanged() int {
	n := 0
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			if !q.LeftAlone() && !q.wantsWrite() {
				n++
			}
		}
	}
	return n
}
