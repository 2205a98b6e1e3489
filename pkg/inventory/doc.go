// Package inventory reads the IRQ inventory of a machine: every IRQ line
// with a handler (/proc/interrupts, /proc/irq/N), the PCI devices that
// own them (/sys/bus/pci/devices), their network interfaces
// (/sys/class/net) with their tx queues' XPS maps and, for those with
// threaded NAPI on, their NAPI kthreads (pkg/napi) and the kthreads'
// affinities (/proc/PID/status), and which IRQs the kernel manages.
// /proc is read for kthreads only when an interface is threaded (and
// then kthreadd's children, pkg/napi); at the host's roots the netdev
// family's napi-get is asked first (6.8+). A queue, interface or
// thread that cannot be read keeps its error (TxQueue.Err,
// Device.TxQueuesErr, NAPI.Err, NAPIThread.Err) and never fails the
// read: the IRQs are placed all the same.
// Whether a device
// IRQ serves a queue is the planner's call (pkg/policy).
//
// The package only reads. Roots are values (FS{Proc, Sys}), so the same
// code runs on a host and on a fixture tree. Parsers are pure and never
// panic; errors name the file, quote the bad value and wrap
// kernfs.ErrMalformed or the underlying error.
//
// Races with the kernel are expected, not errors: an IRQ freed (its
// /proc/irq/N removed) or a device or interface removed while it is read
// is left out of the result.
package inventory
