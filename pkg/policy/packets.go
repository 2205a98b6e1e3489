package policy

import (
	"slices"

	"github.com/numairqd/numairqd/pkg/load"
)

// shareByPackets splits each balanced device's load among its queues by
// their packets where a per-queue source counts them: the interrupt
// estimate undercounts busy queues, which poll more and interrupt less
// per packet. The device's total stays the estimate's (only /proc/stat
// measures time); a device with an uncounted queue keeps the estimate.
// It sets each balanced device's LoadSource and its queue IRQs' loads.
func shareByPackets(p *Plan, units []unit, l *load.Loads) {
	byDev := map[int][]int{}
	var devs []int
	for i, u := range units {
		if _, ok := byDev[u.dev]; !ok {
			devs = append(devs, u.dev)
		}
		byDev[u.dev] = append(byDev[u.dev], i)
	}
	for _, dev := range devs {
		d := &p.Devices[dev]
		d.LoadSource = load.SourceInterrupts
		mine := byDev[dev]
		rates := make([]float64, len(mine))
		noises := make([]float64, len(mine))
		var total, totalNoise, sum float64
		source := ""
		ok := true
		for j, i := range mine {
			u := &units[i]
			total += u.load
			totalNoise += u.noise
			counted := false
			for _, id := range unitQueueIDs(d, u) {
				for _, iface := range d.Interfaces {
					if q, found := l.Queue(iface, id); found && q.Ready {
						rates[j] += q.Rate
						noises[j] += q.Noise
						source, counted = q.Source, true
					}
				}
			}
			ok = ok && counted
			sum += rates[j]
		}
		if !ok || sum <= 0 {
			continue
		}
		d.LoadSource = source
		for j, i := range mine {
			u := &units[i]
			share := rates[j] / sum
			u.load = total * share
			u.noise = totalNoise*share + total*noises[j]/sum
			spreadOver(d, u)
		}
	}
}

// spreadOver gives u's IRQs its load, in proportion to what the estimate
// gave each (equally when it gave none), for the plan's IRQ loads.
func spreadOver(d *Device, u *unit) {
	var est float64
	for _, k := range u.irqs {
		est += d.IRQs[k].Load
	}
	for _, k := range u.irqs {
		share := 1 / float64(len(u.irqs))
		if est > 0 {
			share = d.IRQs[k].Load / est
		}
		d.IRQs[k].Load = u.load * share
	}
}

// unitQueueIDs are the kernel queue ids whose packets are u's: those
// netlink links to its IRQs (a channel's NAPI may also serve the tx
// queues of other traffic classes), else its queue index.
func unitQueueIDs(d *Device, u *unit) []int {
	var ids []int
	for _, k := range u.irqs {
		for _, id := range d.IRQs[k].QueueIDs {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return []int{u.queue}
	}
	return ids
}
