// Package config holds numairqd's configuration: which CPUs IRQs may use,
// the per-device rules that choose a policy, and the daemon's options.
// Parse is strict, all or nothing (a reload never half-applies a broken
// file) and bounded (no file can hang the daemon or exhaust its memory).
package config
