// Package policy computes where every IRQ should go, a pure function of
// a topology snapshot, an IRQ inventory, a config and the Memory of
// earlier rounds.
//
// The policies are docs/placement.md's: numa-hop (spread.go), linear, pinned
// and ignore. Names tell queue from control IRQs (names.go); XPS maps
// and NAPI kthreads follow their IRQs. A plan carries its reasons.
package policy
