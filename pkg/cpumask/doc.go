// Package cpumask holds Mask, an immutable set of CPU ids, and the two
// text formats the kernel uses for CPU sets: the list format of
// cpulist and smp_affinity_list ("0-3,8") and the hex format of
// smp_affinity ("00000000,00010000").
//
// The names are Go's (And, AndNot, Weight, All); a method that does what
// a kernel cpumask function does names it. Callers work with whole sets,
// as for_each_cpu_andnot does, not by indexing a mask (cpumask_nth).
//
// Parsers never panic: malformed input returns an error that quotes the
// input and wraps malformed.Err (kernfs.ErrMalformed).
package cpumask
