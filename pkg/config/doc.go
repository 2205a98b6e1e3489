// Package config holds numairqd's configuration: which CPUs IRQs may use,
// the per-device rules that choose a policy, and the daemon's options.
// Parsing is strict, all or nothing, and bounded in time and memory.
package config
