// Package inventory reads the IRQ inventory of a machine: every IRQ line
// with a handler (from /proc/interrupts and /proc/irq/N), the PCI devices
// that own them (from /sys/bus/pci/devices) and the network interfaces
// on those devices (from /sys/class/net), and which IRQs the kernel
// manages. Whether a device IRQ serves a queue is the planner's call
// (pkg/policy), from the action names read here.
//
// The package only reads. Roots are values (FS{Proc, Sys}), so the same
// code runs on a host and on a fixture tree from internal/fakesys. One
// file parses one kernel file; the parsers are pure functions of an
// io.Reader or a string and never panic. Errors name the file and quote
// the bad value, and wrap kernfs.ErrMalformed or the underlying error so
// callers can test them with errors.Is.
//
// Races with the kernel are expected, not errors: an IRQ freed between
// reading /proc/interrupts and /proc/irq/N (freeing its descriptor
// removes the directory), or a PCI device or interface removed while it is read, is
// left out of the result. A Reader re-reads what the kernel shows may
// have changed and keeps the rest; the daemon's periodic resync reads
// everything, so nothing kept is trusted for long.
package inventory
