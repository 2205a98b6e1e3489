// Package napi finds the kernel threads of threaded NAPI
// (/sys/class/net/DEV/threaded = 1) and what each one serves, so that a
// later step can pin each thread to the CPUs of its queue's IRQ: the
// kernel never moves a NAPI kthread itself (docs/datapath-draft.md §9).
//
// What a kernel tells:
//
//   - 6.8 and later: the "netdev" generic netlink family's napi-get
//     dump (read by pkg/netdev) gives, per NAPI with an id, its ifindex, its id, its kthread's
//     pid (only when threaded) and its IRQ (only when the driver calls
//     netif_napi_set_irq; virtio-net before 6.15 does not). TX-only
//     NAPIs (netif_napi_add_tx, id 0) are not listed.
//   - Before 6.8 (the "netdev" family does not exist, or has no
//     napi-get): only /proc. Each thread is a child of kthreadd (so
//     only the pids of /proc/2/task/2/children are read, all of /proc
//     without CONFIG_PROC_CHILDREN) named
//     "napi/<dev>-<napi id>", cut to 15 bytes (TASK_COMM_LEN), so the id,
//     and for names of 10 bytes or more even the device, may be lost.
//     The name is fixed at creation: a renamed device keeps its old
//     thread names.
//
// Neither source says which queue a NAPI serves on these kernels, so a
// driver rule fills Thread.Queue where one is known. virtio-net
// (virtnet_alloc_queues adds rq[i], then sq[i], for i = 0..max-1; NAPI
// ids are handed out in increasing order; writing threaded = 1 creates
// the threads walking dev->napi_list, to which each add prepends):
// RX queue k is the k-th smallest id of the device, and TX queue k,
// whose NAPI has id 0 ("napi/<dev>-0" for every TX queue), is the
// thread created just before RX queue k's, which the rule checks in
// pid order and declines when the threads do not alternate. Both were
// checked against which thread wakes for which queue's traffic on
// Debian's 6.1 in the QEMU lab (test/e2e/napi_test.go). Other drivers
// get no queue before 6.8 (and after, only the IRQ their driver sets).
//
// On 6.1 the threads outlive threaded = 0 (they stop polling but stay),
// ethtool -L and CPU hotplug: the pids do not change, so a pin holds
// until the device's NAPIs are deleted (driver unbind, device removal).
//
// The package only reads, except Pin, which sets one thread's CPU
// affinity with sched_setaffinity(2) and reads it back.
package napi
