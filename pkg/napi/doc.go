// Package napi finds the kernel threads of threaded NAPI and what each
// serves, so that pkg/apply can pin them to their IRQ's CPUs. napi-get
// (6.8+) gives pid, id and IRQ; /proc adds threads by their names,
// "napi/<dev>-<id>" cut to 15 bytes; a driver rule (virtio-net) gives
// the queue. The package only reads.
package napi
