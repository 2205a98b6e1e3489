// Package policy computes where every IRQ should go: a pure function of
// a topology snapshot, an IRQ inventory and a config, with no I/O, so a
// plan can be printed, served and tested without touching /proc.
//
// Policies:
//   - numa-hop: queue i of a device goes to the i-th CPU of its node's
//     spread order (cpumask_local_spread), balanced across devices;
//   - linear: queue i goes to the i-th allowed CPU in id order, wrapping
//     (the MANA driver's rule when queues outnumber CPUs); auto picks it
//     when a device has at least as many queues as allowed CPUs;
//   - pinned: every IRQ of the device gets the rule's CPUs;
//   - ignore: the device is left alone.
//
// Each device IRQ is first classified from its action names, by the
// built-in naming rules or a rule's queue_regex: a queue IRQ with a
// queue index, or a control IRQ. Managed IRQs (found so by the inventory,
// or refused by the kernel in an earlier round: Memory.Refused) are
// never planned; control IRQs get their node's allowed CPUs as one
// mask. The planner makes every placement decision: an IRQ is never
// moved onto a CPU that had no free vector (Memory.Full), and
// Plan.Writes is all apply has to do.
package policy
