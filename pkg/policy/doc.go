// Package policy computes where every IRQ should go: a pure function of
// a topology snapshot, an IRQ inventory, a config and the Memory of
// earlier rounds, so a plan can be printed, served and tested without
// touching /proc.
//
// The policies are the README's: numa-hop (spread.go), linear, pinned
// and ignore. IRQs are told apart into queue and control IRQs by their
// names (names.go); managed IRQs are never planned, nothing goes onto a
// full CPU, and an IRQ the kernel kept elsewhere is written again a
// bounded number of times (effective.go). Tx queues' XPS maps (xps.go)
// and threaded NAPI kthreads (napi.go) follow their IRQs. A plan carries
// its reasons as data (explain.go) for `numairqd plan` and /plan.
package policy
