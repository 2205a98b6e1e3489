// Package inventory reads a machine's IRQs and the devices that own
// them: every IRQ with a handler (/proc/interrupts, /proc/irq/N), the PCI
// devices (/sys/bus/pci/devices), their network interfaces with the tx
// queues' XPS maps and the threaded NAPI kthreads, and which IRQs the
// kernel manages.
//
// Roots are values (FS), so the same code reads a host or a fixture tree.
// Errors name the file and wrap kernfs.ErrMalformed or the cause. A queue,
// interface or thread that cannot be read keeps its error and never fails
// the read, and an IRQ or device removed while read is left out: races
// with the kernel are expected. The types build on any GOOS, the readers
// on Linux.
package inventory
