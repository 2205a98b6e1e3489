package inventory

import (
	"regexp"
	"strings"
)

// driverManaged names IRQs whose vectors the kernel always allocates
// with managed affinity, so it refuses any user affinity. Kernels since
// 6.12 make their smp_affinity 0444, which readIRQ sees; before that the
// file reads 0644 and only a failed write (EIO) would tell, too late for
// a plan that must not count them as movable queues. The drivers:
//   - nvme (drivers/nvme/host/pci.c nvme_setup_irqs): I/O queue vectors
//     come from pci_alloc_irq_vectors_affinity with PCI_IRQ_AFFINITY;
//     the admin queue nvmeXq0 is the one pre_vector, not managed;
//   - virtio-blk (drivers/block/virtio_blk.c init_vq): passes an
//     irq_affinity to virtio_find_vqs, so its "req.K" vectors are managed.
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

// actionsName joins actions the way /proc/interrupts prints them.
func actionsName(actions []string) string { return strings.Join(actions, ", ") }
