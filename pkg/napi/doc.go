// Package napi finds the kernel threads of threaded NAPI
// (/sys/class/net/DEV/threaded = 1) and what each one serves, so that
// pkg/apply can pin each thread to the CPUs of its queue's IRQ: the
// kernel never moves a NAPI kthread itself (docs/datapath-draft.md §9).
//
// napi-get (Linux 6.8+, Options.NAPIs) gives each threaded NAPI's pid,
// id and, where the driver sets it, IRQ. /proc gives the rest: each
// thread is a child of kthreadd named "napi/<dev>-<id>", cut to 15
// bytes, so the id and even the device may be lost. Neither says which
// queue a NAPI serves; for virtio-net a driver rule (rule.go) does, from
// the order in which the driver adds its NAPIs and the kernel creates
// their threads. The package only reads.
package napi
