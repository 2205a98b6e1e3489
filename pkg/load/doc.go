// Package load samples how much CPU time interrupts take, per CPU and
// per IRQ, so that placement can weigh IRQs by their load and not only
// count them (balance: load in pkg/policy).
//
// What is sampled: each CPU's irq and softirq ticks from /proc/stat
// (ParseStat), and each IRQ's per-CPU interrupt counts from
// /proc/interrupts, parsed by inventory.ParseInterrupts. A Sampler reads
// both on every Sample and turns the deltas since the previous sample
// into an interrupt rate per IRQ and a fraction of time in irq+softirq
// per CPU. The kernel does not measure time per IRQ, so, as irqbalance
// does (compute_irq_branch_load_share), each CPU's measured time is
// shared out over the IRQs that fired on it in proportion to their
// interrupts there; an IRQ's load, in CPU-seconds per second, is the sum
// of its shares.
//
// A CPU's irq+softirq time is more than its device IRQs': the local
// timer and the IPIs, rows /proc/interrupts names and the parser drops,
// and the timer, RCU and scheduler softirqs run there too. That time
// cannot be told apart, so it goes to the IRQs that fired on the CPU in
// the same interval, as in irqbalance, which makes a quiet IRQ on a
// busy CPU look heavier than it is. Time on a CPU where no IRQ fired is
// kept as the CPU's Unattributed load: load that moving IRQs does not
// move.
//
// Smoothing: every rate and load is an exponentially weighted moving
// average whose old values lose half their weight every half-life
// (Config.HalfLife). The weight of a new value is computed from
// the actual interval, w = 1 - 2^(-dt/halfLife), so uneven or missed
// samples weigh as the time they span; the average costs one number per
// IRQ and per CPU and O(1) work per sample, where a window would keep
// every sample in it. Beside each average the Sampler keeps the
// exponentially weighted variance of the intervals around it and the
// sum of the squared weights, which give the average's standard error
// (IRQLoad.Noise): how much of a load is the tick's and the split's
// noise, so that the planner does not move queues for it.
//
// Counters are cumulative and can restart. An IRQ is known by its
// number and its identity (chip, hwirq, actions): a number freed and
// requested by another handler starts a new history. A count that goes
// down (a 32-bit per-CPU count wrapping, a descriptor reallocated)
// gives no delta for that interval, never a negative or huge rate. A
// CPU that goes offline drops out of both files; its column is left out
// of every delta until it has been back for a whole interval. IRQs that
// leave /proc/interrupts and CPUs that go offline are forgotten, so
// memory follows the machine, not its history.
//
// Kernels without CONFIG_IRQ_TIME_ACCOUNTING (Debian's among them) keep
// the hardirq column of /proc/stat at 0 however many interrupts come
// (irqbalance #98), but the tick still samples softirq context into
// the softirq column: an unbiased, if coarse, estimate of the time a
// NAPI queue mostly spends. The Sampler shares that time out as it
// would measured time. Only where neither column moves (none since
// boot, or none while a CPU took 100000 interrupts) does it fall back,
// saying so in Loads.TimeAccounting, to each IRQ's rate times
// a fixed cost per interrupt.
//
// The package only reads; it never opens /proc/irq. Roots are values
// (FS{Proc}), so the same code runs on a host and on a fixture tree.
package load
