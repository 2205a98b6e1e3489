// Package kernfs reads the kernel's text files, sysfs and procfs.
//
// Errors name the file. A missing file is fs.ErrNotExist, never
// ErrMalformed, to tell a kernel that lacks a file from one that wrote
// nonsense into it. Reads stop at MaxAttrSize and refuse a FIFO or device
// without blocking, so bad input never hangs or bloats the daemon. The
// readers are Linux-only; the errors and the tokenizer build anywhere.
package kernfs
