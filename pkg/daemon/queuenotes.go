package daemon

import (
	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/state"
)

// logQueueNotes warns once per IRQ and name of a queue netdev netlink
// and the IRQ's name disagree on (netlink wins: policy.fromNetlink), and
// of a device whose netlink read failed, once per error: the plan is
// right either way, but a naming rule is wrong, or the kernel refused.
func (d *Daemon) logQueueNotes(st *state.State) {
	seen := make(map[string]bool, len(d.queueNotes))
	for _, dev := range st.Plan.Devices {
		for _, q := range dev.IRQs {
			if q.QueueNote == "" {
				continue
			}
			key := q.Name + "\x00" + q.QueueNote
			seen[key] = true
			if !d.queueNotes[key] {
				d.log.Warn("netlink and the IRQ's name disagree on its queue; following netlink",
					zap.Int("irq", q.Number), zap.String("name", q.Name), zap.String("device", dev.PCI), zap.String("why", q.QueueNote))
			}
		}
	}
	for _, dev := range st.Inventory.Devices {
		if dev.NetQueuesErr == nil {
			continue
		}
		key := dev.PCI + "\x00" + dev.NetQueuesErr.Error()
		seen[key] = true
		if !d.queueNotes[key] {
			d.log.Warn("cannot ask netdev netlink which IRQ serves which queue; the IRQ names decide",
				zap.String("device", dev.PCI), zap.Error(dev.NetQueuesErr))
		}
	}
	d.queueNotes = seen
}
