// Package config holds numairqd's configuration: which CPUs IRQs may use,
// the per-device rules that choose a placement policy, and the daemon's
// own options. Parse decodes the YAML file strictly and all at once:
// every unknown key, wrong type and bad value is reported with its file,
// line and key path, and a file with any error yields no Config, so a
// reload never half-applies a broken file. configs/numairqd.yaml is the
// documented example.
package config
