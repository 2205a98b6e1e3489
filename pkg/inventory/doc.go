// Package inventory reads a machine's IRQs and the devices that own
// them: every IRQ with a handler, the PCI devices, their interfaces' tx
// queues and threaded NAPI kthreads, and which IRQs the kernel manages.
//
// Roots are values (FS), so the same code reads a host or a fixture
// tree. What cannot be read keeps its error; what is removed while read
// is left out. The readers are Linux-only.
package inventory
