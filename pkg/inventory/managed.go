package inventory

import "regexp"

// driverManaged names IRQs whose vectors the drivers always allocate
// with managed affinity, for kernels before 6.12, where their
// smp_affinity is still writable and only a write's EIO would tell
// (nvmeXq0, the admin queue, is not managed).
var driverManaged = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`^nvme\d+q[1-9]\d*$`), "nvme I/O queue: the driver allocates it with managed affinity"},
	{regexp.MustCompile(`^virtio\d+-req\.\d+$`), "virtio-blk queue: the driver allocates it with managed affinity"},
}

// markDriverManaged marks irq managed if an action is driverManaged.
func markDriverManaged(irq *IRQ) {
	if irq.Managed {
		return
	}
	for _, a := range irq.Actions {
		for _, m := range driverManaged {
			if m.re.MatchString(a) {
				irq.Managed, irq.ManagedReason = true, m.why
				return
			}
		}
	}
}
