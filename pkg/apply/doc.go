// Package apply makes a plan's writes: it is the only code in numairqd
// that writes to /proc and /sys, or sets a thread's CPU affinity.
//
// A Writer makes one write of one mask to one IRQ, one tx queue's XPS
// map or one NAPI kthread (ProcWriter writes
// <Proc>/irq/N/smp_affinity_list and
// <Sys>/class/net/IF/queues/tx-N/xps_cpus on a host or a fixture tree,
// and pins threads with sched_setaffinity only at the host's /proc,
// after checking the pid is still the thread; pin.go).
// NAPI thread writes are classified apart too (napi.go): ESRCH or a
// reused pid is KindVanished; EPERM, EINVAL and a mask the thread's
// cpuset trimmed KindRefused, never a rescan; counted in
// Result.NAPIByKind.
// XPS writes are classified apart (xps.go): the file refusing the map
// (ENOENT, EINVAL) is KindUnsupported, a missing file KindVanished, and
// they are counted in Result.XPSByKind, not with the IRQs. An
// Applier makes each of a policy.Plan's Writes, exactly as planned, and
// sorts each kernel error into an outcome the daemon acts on, the way
// irqbalance's activate.c does (docs/kernel.md §3.1). What an error
// teaches goes into the policy.Memory that Apply returns, so the next
// plan, not the writer, decides where the IRQ goes instead:
//
//   - EIO/EPERM: the kernel will not let anyone move the IRQ (managed or
//     unsteerable): Memory.Refused, planned as managed from then on.
//   - ENOSPC: no free vector on the planned CPUs: Memory.Full, which the
//     next plan avoids (the next CPU of the device's order).
//   - EINVAL: no CPU of the mask is online any more; the snapshot is stale
//     and the caller should rescan at once.
//   - EBUSY/EAGAIN: a previous move is pending; retried with backoff.
//   - ENOENT: the IRQ was freed; not an error.
//
// A write that succeeds goes into Memory.Verify with the IRQ's interrupt
// count (Options.Interrupts), so the next plans can check that the
// kernel really moved it (effective_affinity_list) and ask for it again
// when it did not (policy/effective.go).
//
// The Applier remembers each IRQ's mask, each tx queue's XPS map and
// each NAPI kthread's CPUs (by pid and name) from before its first
// change so Restore can put them back on exit
// (restore_on_exit); what it keeps of a NAPI kthread goes when a plan
// no longer lists it.
//
// An Applier is not safe for concurrent use: it is meant to be called
// from the daemon's one loop goroutine, and the Result each call returns
// is the caller's to publish.
package apply
