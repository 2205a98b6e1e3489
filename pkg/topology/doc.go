// Package topology reads the CPU and NUMA layout from sysfs into an
// immutable Snapshot and answers the planner: in which order should a
// device on node n use the CPUs? The order is the kernel's (hop masks as
// sched_init_numa() builds them): the i-th CPU of Spread(n) is
// cpumask_local_spread(i, n).
package topology
