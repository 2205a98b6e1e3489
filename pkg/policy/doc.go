// Package policy computes where every IRQ should go: a pure function of
// a topology snapshot, an IRQ inventory, a config and the Memory of
// earlier rounds, with no I/O, so a plan can be printed, served and
// tested without touching /proc.
//
// Policies (see the README): numa-hop places the queues of every such
// device together under the placement objective (spread.go): no queue
// farther from its node than the drivers' own spread
// (cpumask_local_spread, queue i on the i-th CPU) puts it, and within
// that the fewest queues on the busiest CPU, core and LLC; linear takes
// the i-th allowed CPU, wrapping (the MANA driver's rule); pinned gives the rule's CPUs; ignore leaves the
// device alone. IRQs are classified by their action names into queue
// and control IRQs, each queue IRQ combined, rx-only or tx-only, with
// the drivers' own format strings (names.go); managed IRQs (by the inventory or Memory.Refused)
// are never planned, no IRQ is moved onto a full CPU (Memory.Full), an
// IRQ the kernel kept outside a mask written earlier is written again a
// bounded number of times (Memory.Verify, effective.go), and
// Plan.Writes is all apply has to do.
//
// Once the IRQs are placed, each NIC's tx queues get an XPS map that
// follows them (xps.go): a CPU sends on the queue whose completion IRQ
// is on it, or on the nearest one, so completions stay local; and each
// kthread of threaded NAPI is pinned to the CPUs of the IRQ it serves
// (napi.go), which the kernel never does itself.
//
// A plan carries its reasons as data (explain.go), for `numairqd plan`
// and /plan to show, not to re-derive: which source left each CPU out
// of the allowed set, why auto chose a device's policy, which devices
// hold the drivers' CPUs of a numa-hop device's queues, and how its
// distances and the plan's stacking compare with the drivers' own
// spreads (versus.go).
package policy
