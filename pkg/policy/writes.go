package policy

import (
	"strconv"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// WriteKind is what a Write sets: only an IRQ's affinity today, later
// perhaps a tx queue's XPS map or a NAPI thread's CPUs.
type WriteKind uint8

// WriteIRQAffinity writes /proc/irq/N/smp_affinity_list.
const WriteIRQAffinity WriteKind = iota

// String names the kind for logs and metrics.
func (k WriteKind) String() string {
	if k == WriteIRQAffinity {
		return "irq_affinity"
	}
	return "write_kind(" + strconv.Itoa(int(k)) + ")"
}

// Write is one change the plan asks of the kernel.
type Write struct {
	Kind          WriteKind
	IRQ           int    // the IRQ, for WriteIRQAffinity
	Name          string // what is written, for logs: the IRQ's name
	Device        string // its device's PCI address ("" for none)
	Before, After cpumask.Mask
}

// Writes lists, in plan order, each IRQ the plan places whose planned
// mask differs from its current one, or that the kernel kept outside it
// (EffectiveRewrite).
func (p *Plan) Writes() []Write {
	var out []Write
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			if q.wantsWrite() {
				out = append(out, Write{Kind: WriteIRQAffinity, IRQ: q.Number, Name: q.Name, Device: d.PCI, Before: q.Current, After: q.Planned})
			}
		}
	}
	return out
}

// Unchanged counts the IRQs the plan places that are already there and
// not written again.
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
