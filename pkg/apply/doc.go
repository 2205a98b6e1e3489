// Package apply makes a plan's writes: the only code in numairqd that
// writes to /proc and /sys or sets a thread's CPU affinity.
//
// An Applier makes a policy.Plan's writes (IRQ affinities, XPS maps, NAPI
// kthreads) and sorts each kernel error into a Kind, as irqbalance's
// activate.c does (docs/kernel.md §3.1). What an error teaches goes into
// the policy.Memory Apply returns, for the next plan: EIO/EPERM
// Memory.Refused, ENOSPC Memory.Full, EINVAL a rescan, EBUSY/EAGAIN a
// retry, ENOENT a freed IRQ; a success goes into Memory.Verify. Restore
// puts back what the Applier changed.
package apply
