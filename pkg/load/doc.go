// Package load samples how much CPU time interrupts take, per CPU and per
// IRQ, so placement can weigh IRQs by load and not only count them.
//
// A Sampler reads each CPU's irq and softirq ticks (/proc/stat) and each
// IRQ's per-CPU counts (/proc/interrupts), and, as irqbalance does,
// shares a CPU's time over the IRQs that fired on it by their
// interrupts there; where no time is accounted, an IRQ's rate times a
// fixed cost stands in. Loads are exponentially weighted averages with
// their standard errors, so the planner does not move queues for noise.
// Reading /proc (FS) is Linux-only.
package load
