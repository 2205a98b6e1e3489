// Package config holds numairqd's configuration: which CPUs IRQs may use,
// the per-device rules that choose a placement policy, and the daemon's
// own options. Parse is strict and all or nothing, so a reload never
// half-applies a broken file, and bounded, so no file can hang the daemon
// or exhaust its memory. configs/numairqd.yaml is the documented example.
package config
