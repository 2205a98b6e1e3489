package inventory

import "regexp"

// driverManaged names IRQs whose vectors the kernel always allocates
// with managed affinity. Kernels since 6.12 make their smp_affinity
// 0444; before that only a failed write (EIO) would tell, too late for
// the plan. nvme I/O queues come from pci_alloc_irq_vectors_affinity
// (nvme_setup_irqs; the admin queue nvmeXq0 is a pre_vector, not
// managed); virtio-blk's init_vq passes an irq_affinity to
// virtio_find_vqs.
var driverManaged = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`^nvme\d+q[1-9]\d*$`), "nvme I/O queue: the driver allocates it with managed affinity"},
	{regexp.MustCompile(`^virtio\d+-req\.\d+$`), "virtio-blk queue: the driver allocates it with managed affinity"},
}

// markDriverManaged marks irq managed when one of its actions is a
// driverManaged name and nothing else has marked it yet.
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
