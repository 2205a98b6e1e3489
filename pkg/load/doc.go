// Package load samples how much CPU time interrupts take, per CPU and per
// IRQ, so placement can weigh IRQs by load and not only count them.
//
// A Sampler shares each CPU's irq and softirq time (/proc/stat) over the
// IRQs that fired on it by their interrupts there (/proc/interrupts), as
// irqbalance does. Loads are exponentially weighted averages with their
// standard errors, so the planner does not move queues for noise.
package load
