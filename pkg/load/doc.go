// Package load samples how much CPU time interrupts take, per CPU and
// per IRQ, so that placement can weigh IRQs by their load and not only
// count them (balance: load in pkg/policy).
//
// A Sampler reads each CPU's irq and softirq ticks from /proc/stat and
// each IRQ's per-CPU counts from /proc/interrupts. The kernel does not
// measure time per IRQ, so, as irqbalance does
// (compute_irq_branch_load_share), each CPU's time is shared out over
// the IRQs that fired on it in proportion to their interrupts there.
// That time includes the timer, IPIs and other softirqs, which cannot
// be told apart; time on a CPU where no IRQ fired is the CPU's
// Unattributed load, which moving IRQs does not move.
//
// Every rate and load is an exponentially weighted moving average with
// Config.HalfLife, weighted by the actual interval so uneven or missed
// samples weigh as the time they span; its standard error
// (IRQLoad.Noise) keeps the planner from moving queues for noise.
//
// An IRQ is known by its number and identity (chip, hwirq, actions); a
// count that goes down gives no delta for that interval; IRQs and CPUs
// that leave are forgotten, so memory follows the machine.
//
// Kernels without CONFIG_IRQ_TIME_ACCOUNTING (Debian's) keep the
// hardirq column at 0 (irqbalance #98), but the tick still samples
// softirq time, where a NAPI queue spends most of its, so that is
// shared out too. Only where neither column moves does the Sampler
// fall back, saying so in Loads.TimeAccounting, to each IRQ's rate
// times a fixed cost per interrupt.
//
// The package only reads. Roots are values (FS{Proc}), so the same code
// runs on a host and on a fixture tree.
package load
