// Package topology reads the CPU and NUMA layout of a machine from sysfs
// into an immutable Snapshot, and answers the question the planner asks
// of it: in which order should a device on node n use the CPUs?
//
// The order is the kernel's: hop masks as sched_init_numa() builds them
// (kernel/sched/topology.c), walked the way for_each_numa_hop_mask() and
// sched_numa_find_nth_cpu() walk them, so the i-th CPU of Spread(n) is
// what cpumask_local_spread(i, n) returns on the same machine. The
// Snapshot builds on any GOOS; FS and Reader read sysfs on Linux.
package topology
