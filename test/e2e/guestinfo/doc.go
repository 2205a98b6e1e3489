// Package guestinfo reads what the e2e harness asserts on from a Linux
// system: online CPUs, NUMA nodes and distances, IRQs with their
// affinities, and PCI devices with their NUMA node and MSI IRQs.
//
// The guest agent (test/e2e/guestcheck) runs Read inside the QEMU guest
// and prints the State as JSON; the host-side test decodes the same
// type. The filesystem root is a value (FS), so Read also works on a
// fixture tree.
package guestinfo
