package measure

import (
	"regexp"
	"sort"
	"strconv"

	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// Device is a multi-queue PCI device of a guest state with its IRQs.
type Device struct {
	PCI   string
	Kind  string // "virtio-net" or "nvme"
	Child string // virtio0, nvme0
	Node  int
	// Queues are the queue IRQs in (queue, name) order; Control the
	// others (virtioN-config, nvmeNq0).
	Queues  []QueueIRQ
	Control []guestinfo.IRQ
}

// QueueIRQ is one queue IRQ of a Device.
type QueueIRQ struct {
	Name    string // normalised: "input.0", "output.0", "q1"
	Queue   int    // queue index, from 0
	Managed bool   // kernel-managed (NVMe I/O queues)
	IRQ     guestinfo.IRQ
}

var (
	virtioQueueRe = regexp.MustCompile(`^(virtio\d+)-((?:input|output)\.(\d+))$`)
	nvmeQueueRe   = regexp.MustCompile(`^(nvme\d+)(q(\d+))$`)
)

// QueueName normalises a virtio-net queue IRQ name ("virtio3-input.2"
// -> "input.2"), so a map survives a re-bind that changes the virtio
// index; ok is false for any other name.
func QueueName(action string) (name string, queue int, ok bool) {
	m := virtioQueueRe.FindStringSubmatch(action)
	if m == nil {
		return "", 0, false
	}
	q, _ := strconv.Atoi(m[3])
	return m[2], q, true
}

// Devices returns the virtio-net and NVMe devices of s, by PCI address.
func Devices(s guestinfo.State) []Device {
	var out []Device
	for _, p := range s.PCI {
		for _, child := range p.Children {
			d := Device{PCI: p.Address, Child: child, Node: p.NUMANode}
			switch {
			case p.Driver == "virtio-pci" && len(child) > 6 && child[:6] == "virtio":
				d.Kind = "virtio-net"
			case p.Driver == "nvme":
				d.Kind = "nvme"
			default:
				continue
			}
			for _, irq := range s.IRQs {
				if len(irq.Actions) == 0 {
					continue
				}
				a := irq.Actions[0]
				if m := virtioQueueRe.FindStringSubmatch(a); m != nil && m[1] == child {
					q, _ := strconv.Atoi(m[3])
					d.Queues = append(d.Queues, QueueIRQ{Name: m[2], Queue: q, IRQ: irq})
					continue
				}
				if m := nvmeQueueRe.FindStringSubmatch(a); m != nil && m[1] == child {
					q, _ := strconv.Atoi(m[3])
					if q == 0 {
						d.Control = append(d.Control, irq)
					} else {
						d.Queues = append(d.Queues, QueueIRQ{Name: m[2], Queue: q - 1, Managed: true, IRQ: irq})
					}
					continue
				}
				if a == child+"-config" {
					d.Control = append(d.Control, irq)
				}
			}
			sort.Slice(d.Queues, func(i, j int) bool {
				if d.Queues[i].Queue != d.Queues[j].Queue {
					return d.Queues[i].Queue < d.Queues[j].Queue
				}
				return d.Queues[i].Name < d.Queues[j].Name
			})
			out = append(out, d)
		}
	}
	return out
}

// QueueMap is d's queue IRQs by normalised name to smp_affinity_list.
func (d Device) QueueMap() Map {
	m := Map{}
	for _, q := range d.Queues {
		m[q.Name] = q.IRQ.Affinity
	}
	return m
}
