// Package guestinfo reads what the e2e harness asserts on from a Linux
// system: online CPUs, NUMA nodes and distances, IRQs with their
// affinities, and PCI devices with their NUMA node and MSI IRQs
// (State); and, under traffic, the cumulative interrupt, softirq and
// receive counters that show where the work landed (LoadSample); and
// on the transmit side, each tx queue's XPS mask against its completion
// IRQ (State.XPS, XPSReport) and the runs of `guestcheck send`'s pinned
// senders (TxRun).
//
// The guest agent (test/e2e/guestcheck) runs Read and ReadLoad inside
// the QEMU guest and prints JSON; the host-side tests and the bench
// decode the same types, and LoadBetween turns two samples into
// per-CPU loads and per-IRQ shares. The filesystem root is a value
// (FS), so both also work on a fixture tree.
package guestinfo
