// Package load samples how much CPU time interrupts take, per CPU and
// per IRQ, so that placement can weigh IRQs by their load and not only
// count them (balance: load in pkg/policy).
//
// A Sampler reads each CPU's irq and softirq ticks from /proc/stat and
// each IRQ's per-CPU counts from /proc/interrupts. The kernel does not
// measure time per IRQ, so, as irqbalance does
// (compute_irq_branch_load_share), each CPU's time is shared out over
// the IRQs that fired on it in proportion to their interrupts there.
// That time includes the timer's, IPIs' and other softirqs', which
// cannot be told apart. Rates and loads are exponentially weighted
// moving averages over the actual intervals, with their standard errors,
// so that the planner does not move queues for noise.
//
// Kernels without CONFIG_IRQ_TIME_ACCOUNTING (Debian's) keep the
// hardirq column at 0 (irqbalance #98), but the tick still samples
// softirq time, where a NAPI queue spends most of its, so that is
// shared out too. Only where neither column moves does the Sampler
// fall back to each IRQ's rate times a fixed cost per interrupt.
//
// The package only reads. Roots are values (FS{Proc}), so the same code
// runs on a host and on a fixture tree.
package load
