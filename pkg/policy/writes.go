package policy

import (
	"strconv"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// WriteKind is what a Write sets: an IRQ's affinity, a tx queue's XPS
// map or a NAPI kthread's CPUs.
type WriteKind uint8

const (
	// WriteIRQAffinity writes /proc/irq/N/smp_affinity_list.
	WriteIRQAffinity WriteKind = iota
	// WriteXPS writes /sys/class/net/IF/queues/tx-N/xps_cpus.
	WriteXPS
	// WriteNAPIThread sets a NAPI kthread's CPU affinity
	// (sched_setaffinity).
	WriteNAPIThread
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
	Kind WriteKind
	// IRQ is the IRQ for WriteIRQAffinity, the tx queue's completion
	// IRQ for WriteXPS, the IRQ the thread follows for WriteNAPIThread.
	IRQ int
	// Name is what is written, for logs: the IRQ's name, "IF tx-N", or
	// the thread's name.
	Name   string
	Device string // its device's PCI address ("" for none)
	// Interface and Queue name the tx queue of a WriteXPS, the
	// interface and queue (-1: unknown) of a WriteNAPIThread.
	Interface string
	Queue     int
	// PID is the thread of a WriteNAPIThread.
	PID           int
	Before, After cpumask.Mask
}

// Writes lists, in plan order, each IRQ the plan places whose planned
// mask differs from its current one, or that the kernel kept outside it
// (EffectiveRewrite), and after a device's IRQs its tx queues whose
// planned XPS map differs from the current one on online CPUs (the
// kernel keeps no offline CPU in a map it is given), then its NAPI
// kthreads whose planned CPUs differ so (NAPIThreadDiffers).
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

// XPSDiffers reports whether the plan sets t's map and it is not so
// on the online CPUs: whether Writes lists it.
func (p *Plan) XPSDiffers(t TxQueue) bool {
	return !t.LeftAlone() && !t.Planned.Equal(t.Current.And(p.online))
}

// NAPIThreadDiffers reports whether the plan pins t and its CPUs are
// not so on the online CPUs (the kernel keeps only online ones from a
// sched_setaffinity): whether Writes lists it.
func (p *Plan) NAPIThreadDiffers(t NAPIThread) bool {
	return !t.LeftAlone() && !t.Planned.Equal(t.Current.And(p.online))
}

// Unchanged counts the IRQs the plan places that are already there and
// not written again.
func (p *Plan) Unchanged() int {
	return len(p.irqsWhere(func(q IRQ) bool { return !q.LeftAlone() && !q.wantsWrite() }))
}
