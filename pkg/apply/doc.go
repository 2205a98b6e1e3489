// Package apply makes a plan's writes: the only code in numairqd that
// writes to /proc and /sys or sets a thread's CPU affinity.
//
// An Applier makes each of a policy.Plan's Writes as planned (IRQ
// affinities, XPS maps, NAPI kthreads) and sorts each kernel error into
// an outcome, as irqbalance's activate.c does (docs/kernel.md §3.1). What
// an error teaches goes into the policy.Memory that Apply returns, so the
// next plan decides where the IRQ goes instead: EIO/EPERM Memory.Refused,
// ENOSPC Memory.Full, EINVAL a stale snapshot to rescan, EBUSY/EAGAIN a
// retry, ENOENT a freed IRQ. A write that succeeds goes into
// Memory.Verify, so later plans check the kernel really moved it.
//
// The Applier remembers what it changed so Restore can put it back on
// exit. It is for the daemon's one loop goroutine.
package apply
