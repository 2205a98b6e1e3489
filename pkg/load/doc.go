// Package load samples how much CPU time interrupts take, per CPU and per
// IRQ, so placement can weigh IRQs by load and not only count them.
//
// A Sampler reads each CPU's irq and softirq ticks (/proc/stat) and each
// IRQ's per-CPU counts (/proc/interrupts). The kernel does not time each
// IRQ, so, as irqbalance does (compute_irq_branch_load_share), a CPU's
// time is shared over the IRQs that fired on it by their interrupts
// there. Without CONFIG_IRQ_TIME_ACCOUNTING only softirq time moves, and
// where neither does, an IRQ's rate times a fixed cost stands in. Loads
// are exponentially weighted averages with their standard errors, so the
// planner does not move queues for noise. The sampling builds on any
// GOOS; reading /proc (FS) is Linux-only.
package load
