// Package config holds numairqd's configuration: which CPUs IRQs may use,
// the per-device rules that choose a placement policy, and the daemon's
// own options. Parse decodes the YAML file strictly and all at once:
// every unknown key, wrong type and bad value is reported with its file,
// line and key path, and a file with any error yields no Config, so a
// reload never half-applies a broken file. Bad input is bounded too:
// Load reads only a regular file of at most 1 MiB, and Parse checks a
// node shared by YAML aliases once, caps the rules and the regexps'
// compiled size, and reports at most 20 errors, so no file can hang the
// daemon or exhaust its memory. configs/numairqd.yaml is the documented
// example.
package config
