// Package kernfs reads the kernel's text files, sysfs and procfs. Errors
// name the file; a missing one is fs.ErrNotExist, nonsense ErrMalformed.
// Reads stop at MaxAttrSize and refuse a FIFO or device without blocking.
package kernfs
