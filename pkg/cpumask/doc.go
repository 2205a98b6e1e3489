// Package cpumask holds Mask, an immutable set of CPU ids, and the
// kernel's list ("0-3,8") and hex ("00000000,00010000") formats of CPU
// sets. Parse errors quote the input and wrap malformed.Err.
package cpumask
