// Package inventory reads a machine's IRQs and the devices that own
// them: every IRQ with a handler, the PCI devices, their interfaces' tx
// queues and threaded NAPI kthreads, and which IRQs the kernel manages.
//
// Roots are values (FS), so the same code reads a host or a fixture
// tree. Errors name the file. A queue, interface or thread that cannot
// be read keeps its error, and an IRQ or device removed while read is
// left out. The types build on any GOOS, the readers on Linux.
package inventory
