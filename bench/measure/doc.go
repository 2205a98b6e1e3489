// Package measure holds what the QEMU bench (bench/qemu_test.go)
// records in the guest and the figures derived from it on the host:
// placement quality of a device's queue IRQs (NUMA distance, IRQs per
// CPU, queue order, banned CPUs), reaction times after CPU hotplug and
// driver re-binds, and each daemon's CPU time and peak RSS.
//
// The figures are pure functions of the records, so bench/report can
// regenerate bench/RESULTS.md from a saved raw.json without a guest.
package measure
