// Package cpumask holds Mask, an immutable set of CPU ids, and the two
// text formats the kernel uses for CPU sets: the list format of
// cpulist and smp_affinity_list ("0-3,8") and the hex format of
// smp_affinity ("00000000,00010000").
//
// Method names follow the kernel's cpumask API (weight, nth,
// nth_and_andnot, and_not) so the planner reads like the kernel code it
// mirrors. Parsers never panic: malformed input returns an error that
// wraps ErrSyntax and quotes the input.
package cpumask
