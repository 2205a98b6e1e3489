// Package cpumask holds Mask, an immutable set of CPU ids, and the two
// text formats the kernel uses for CPU sets: the list format of
// cpulist and smp_affinity_list ("0-3,8") and the hex format of
// smp_affinity ("00000000,00010000").
//
// The names are Go's (And, AndNot, Weight, Next, All); where a method
// does what a kernel cpumask function does, its comment names that
// function. Callers work with whole sets, not positions: topology builds
// each hop mask as a union of node masks (Builder.Or), as
// sched_init_numa() does, and walks a hop ring the way
// for_each_cpu_andnot(mask, prev) does, as mask.And(allowed).AndNot(prev)
// in ascending order; the planner then takes CPUs from that whole order
// instead of indexing a mask (cpumask_nth) once per queue.
//
// Parsers never panic: malformed input returns an error that quotes the
// input and wraps kernfs.ErrMalformed.
package cpumask
