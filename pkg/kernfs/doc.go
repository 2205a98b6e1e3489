//go:build linux

// Package kernfs is for reading kernel text files: sysfs and procfs.
//
// It holds ErrMalformed, the one sentinel for kernel output that does
// not parse, and the one way to read a small attribute file. Errors name
// the file; a missing file is fs.ErrNotExist, never ErrMalformed, to
// tell a kernel that lacks a file from one that wrote nonsense into it.
// Bad input never hangs or bloats the daemon: reads stop at MaxAttrSize,
// a FIFO or device is refused without blocking, and Quote cuts every
// value an error shows. It imports nothing of the project.
package kernfs
