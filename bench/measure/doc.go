// Package measure holds what the QEMU bench (bench/qemu_test.go)
// records in the guest and the figures derived from it on the host:
// placement quality of a device's queue IRQs (NUMA distance, IRQs per
// CPU, queue order, banned CPUs), reaction times after CPU hotplug and
// driver re-binds, each daemon's CPU time and peak RSS, and on the
// transmit side (transmit.go) how a NIC's XPS maps match its completion
// IRQs and how far each sending CPU's completions land.
//
// The figures are pure functions of the records, so bench/report can
// regenerate bench/RESULTS.md from a saved raw.json without a guest.
package measure
