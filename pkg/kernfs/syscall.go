//go:build linux

package kernfs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"syscall"
	"unsafe"
)

// The system calls on procfs and sysfs attributes are raw: they do not
// tell the Go scheduler that the thread may block. An attribute answers
// at once (the opens are O_NONBLOCK, so a FIFO planted in their place
// cannot block either), but under a slow hypervisor such a call can
// still outlast sysmon's 20 µs tick, and with GOMAXPROCS=1 sysmon then
// hands the P to another thread and the caller parks when its call
// returns: two thread switches per call, hundreds per round. Measured
// in the QEMU guest, that handoff cost more than the calls themselves.
// The price: a call that does block holds the P, so the --sysfs and
// --procfs roots must be the kernel's (or a local fixture tree), never
// a network filesystem that can hang.

// openAt is openat(2) of the NUL-terminated name.
func openAt(dirfd int, name []byte, flags int) (int, error) {
	for {
		fd, _, errno := syscall.RawSyscall6(syscall.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&name[0])), uintptr(flags), 0, 0, 0)
		if errno == 0 {
			return int(fd), nil
		}
		if errno != syscall.EINTR {
			return -1, errno
		}
	}
}

// read is one read(2), repeated on EINTR.
func read(fd int, b []byte) (int, error) {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
		if errno == 0 {
			return int(n), nil
		}
		if errno != syscall.EINTR {
			return -1, errno
		}
	}
}

// write is one write(2); EINTR means nothing was written, so it is
// repeated.
func write(fd int, b []byte) (int, error) {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
		if errno == 0 {
			return int(n), nil
		}
		if errno != syscall.EINTR {
			return -1, errno
		}
	}
}

func fstat(fd int, st *syscall.Stat_t) error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(st)), 0); errno != 0 {
		return errno
	}
	return nil
}

// closeFD is close(2). Its error is of no use on a file only read, or
// written by one complete write(2) whose result was already checked.
func closeFD(fd int) {
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
}

// WriteOnce opens path write-only, without O_CREAT (a vanished file
// gives ENOENT instead of a stray new one) or O_TRUNC, and makes one
// write(2) of b: procfs parses each write as one complete value, so a
// split write would set a partial one. It returns how much the write
// took; an error is an *fs.PathError whose Op ("open" or "write") says
// which call failed, wrapping the errno.
func WriteOnce(path string, b []byte) (int, error) {
	name, err := syscall.ByteSliceFromString(path)
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	fd, err := openAt(atCWD, name, syscall.O_WRONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK)
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer closeFD(fd)
	n, err := write(fd, b)
	if err != nil {
		return 0, &fs.PathError{Op: "write", Path: path, Err: err}
	}
	return n, nil
}

// cwd is AT_FDCWD (-100) as a system call argument.
const cwd = ^uintptr(-atCWD - 1)

// maxDirEntries bounds one directory listing. The longest the project
// lists, /sys/bus/pci/devices or a device's msi_irqs, holds a few
// thousand entries on the largest hosts (2048 vectors per MSI-X device).
const maxDirEntries = 1 << 16

// ReadDir calls visit with the name of each entry of the directory at
// path but "." and "..", in the order the kernel lists them; name is
// valid only during the call. It is three system calls or so (open,
// getdents64 until the end, close) with the Reader's buffer and no
// allocation, where os.ReadDir builds a DirEntry per name. A missing
// directory is fs.ErrNotExist; errors are *fs.PathError naming path,
// and an error from visit stops the listing and is returned as is.
func (r *Reader) ReadDir(path string, visit func(name []byte) error) error {
	r.name = append(append(r.name[:0], path...), 0)
	fail := func(op string, err error) error { return &fs.PathError{Op: op, Path: path, Err: err} }
	if bytes.IndexByte(r.name[:len(r.name)-1], 0) >= 0 {
		return fail("open", syscall.EINVAL)
	}
	fd, err := openAt(atCWD, r.name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC|syscall.O_NONBLOCK)
	if err != nil {
		return fail("open", err)
	}
	defer closeFD(fd)
	if len(r.buf) < 8192 {
		r.buf = make([]byte, 8192)
	}
	seen := 0
	for {
		n, err := getdents(fd, r.buf)
		if err != nil {
			return fail("readdirent", err)
		}
		if n == 0 {
			return nil
		}
		for b := r.buf[:n]; len(b) > 0; {
			name, rest, ok := nextDirent(b)
			if !ok {
				return fail("readdirent", fmt.Errorf("%w: a directory entry the kernel would not write", ErrMalformed))
			}
			b = rest
			if string(name) == "." || string(name) == ".." {
				continue
			}
			if seen++; seen > maxDirEntries {
				return fail("readdirent", fmt.Errorf("%w: more than %d entries", ErrMalformed, maxDirEntries))
			}
			if err := visit(name); err != nil {
				return err
			}
		}
	}
}

// nextDirent splits the first struct linux_dirent64 off b: d_ino (8
// bytes), d_off (8), d_reclen (2), d_type (1), then the NUL-terminated
// name, padded to d_reclen.
func nextDirent(b []byte) (name, rest []byte, ok bool) {
	const nameOff = 19
	if len(b) < nameOff {
		return nil, nil, false
	}
	reclen := int(binary.NativeEndian.Uint16(b[16:18]))
	if reclen < nameOff || reclen > len(b) {
		return nil, nil, false
	}
	name = b[nameOff:reclen]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	return name, b[reclen:], true
}

func getdents(fd int, b []byte) (int, error) {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_GETDENTS64, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
		if errno == 0 {
			return int(n), nil
		}
		if errno != syscall.EINTR {
			return -1, errno
		}
	}
}

// Readlink returns the target of the symbolic link at path, as
// os.Readlink does, in one readlinkat(2). A target longer than PATH_MAX
// is not one sysfs writes. Errors are *fs.PathError naming path.
func (r *Reader) Readlink(path string) (string, error) {
	r.name = append(append(r.name[:0], path...), 0)
	if bytes.IndexByte(r.name[:len(r.name)-1], 0) >= 0 {
		return "", &fs.PathError{Op: "readlink", Path: path, Err: syscall.EINVAL}
	}
	const pathMax = 4096
	if len(r.buf) < pathMax+1 {
		r.buf = make([]byte, pathMax+1)
	}
	for {
		n, _, errno := syscall.RawSyscall6(syscall.SYS_READLINKAT, cwd, uintptr(unsafe.Pointer(&r.name[0])),
			uintptr(unsafe.Pointer(&r.buf[0])), pathMax+1, 0, 0)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno != 0:
			return "", &fs.PathError{Op: "readlink", Path: path, Err: errno}
		case int(n) > pathMax:
			return "", &fs.PathError{Op: "readlink", Path: path, Err: TooLarge(pathMax)}
		}
		return string(r.buf[:n]), nil
	}
}

// Exists reports whether path exists, by one faccessat(2) (F_OK). Only
// ENOENT and ENOTDIR say it does not: an error such as EACCES is no
// proof that the file went away.
func (r *Reader) Exists(path string) bool {
	r.name = append(append(r.name[:0], path...), 0)
	if bytes.IndexByte(r.name[:len(r.name)-1], 0) >= 0 {
		return false
	}
	_, _, errno := syscall.RawSyscall(syscall.SYS_FACCESSAT, cwd, uintptr(unsafe.Pointer(&r.name[0])), 0)
	return errno != syscall.ENOENT && errno != syscall.ENOTDIR
}
