//go:build linux

// Package kernfs is for reading kernel text files: sysfs and procfs.
//
// It holds what every reader of kernel output shares: ErrMalformed, the
// one sentinel for kernel output that does not parse (a sysfs or procfs
// file, a netlink message), and the one way to read a small attribute
// file without its trailing newline. Errors name the file. A missing
// file is fs.ErrNotExist, never ErrMalformed, so callers can tell a
// kernel that lacks a file from one that wrote nonsense into it.
//
// Bad input never hangs or bloats the daemon: a read stops at
// MaxAttrSize, a FIFO or device where an attribute belongs is refused
// without blocking, and Quote cuts every value an error shows to
// QuoteLimit bytes.
//
// The package imports nothing of the project, so any package may use it.
package kernfs
