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

// rawCall makes a raw system call of fd, p and a3, repeated on EINTR.
// Raw calls skip the scheduler's P handoff, which costs more than these
// calls; so the --sysfs and --procfs roots must never hang.
func rawCall(trap uintptr, fd int, p unsafe.Pointer, a3 uintptr) (int, error) {
	for {
		n, _, errno := syscall.RawSyscall(trap, uintptr(fd), uintptr(p), a3)
		if errno == 0 {
			return int(n), nil
		}
		if errno != syscall.EINTR {
			return -1, errno
		}
	}
}

// openAt is openat(2) of the NUL-terminated name.
func openAt(dirfd int, name []byte, flags int) (int, error) {
	return rawCall(syscall.SYS_OPENAT, dirfd, unsafe.Pointer(&name[0]), uintptr(flags))
}

func read(fd int, b []byte) (int, error) {
	return rawCall(syscall.SYS_READ, fd, unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)))
}

func fstat(fd int, st *syscall.Stat_t) error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(st)), 0); errno != 0 {
		return errno
	}
	return nil
}

// closeFD is close(2), whose error is of no use here.
func closeFD(fd int) {
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
}

// WriteOnce makes one write(2) of b to path, without O_CREAT.
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
	n, err := rawCall(syscall.SYS_WRITE, fd, unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)))
	if err != nil {
		return 0, &fs.PathError{Op: "write", Path: path, Err: err}
	}
	return n, nil
}

// cwd is AT_FDCWD (-100) as a system call argument.
const cwd = ^uintptr(-atCWD - 1)

// maxDirEntries bounds one directory listing.
const maxDirEntries = 1 << 16

// ReadDir calls visit with each entry name but "." and ".." of the
// directory at path, valid during the call; visit's error stops it.
func (r *Reader) ReadDir(path string, visit func(name []byte) error) error {
	rec := recorder()
	if rec == nil {
		return r.readDir(path, visit)
	}
	var names []string
	err := r.readDir(path, func(name []byte) error {
		names = append(names, string(name))
		return visit(name)
	})
	rec.Record(Access{Op: OpDir, Path: path, Names: names, Err: err})
	return err
}

func (r *Reader) readDir(path string, visit func(name []byte) error) error {
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
		n, err := rawCall(syscall.SYS_GETDENTS64, fd, unsafe.Pointer(unsafe.SliceData(r.buf)), uintptr(len(r.buf)))
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

// nextDirent splits the first struct linux_dirent64 off b: d_ino, d_off,
// d_reclen (u16 at 16), d_type, then the name at 19, NUL-padded.
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

// Readlink is os.Readlink in one readlinkat(2).
func (r *Reader) Readlink(path string) (string, error) {
	target, err := r.readlink(path)
	if rec := recorder(); rec != nil {
		rec.Record(Access{Op: OpLink, Path: path, Target: target, Err: err})
	}
	return target, err
}

func (r *Reader) readlink(path string) (string, error) {
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

// Exists reports whether path exists: faccessat(2) says not ENOENT/ENOTDIR.
func (r *Reader) Exists(path string) bool {
	r.name = append(append(r.name[:0], path...), 0)
	if bytes.IndexByte(r.name[:len(r.name)-1], 0) >= 0 {
		return false
	}
	_, _, errno := syscall.RawSyscall(syscall.SYS_FACCESSAT, cwd, uintptr(unsafe.Pointer(&r.name[0])), 0)
	if rec := recorder(); rec != nil {
		a := Access{Op: OpStat, Path: path}
		if errno != 0 {
			a.Err = errno
		}
		rec.Record(a)
	}
	return errno != syscall.ENOENT && errno != syscall.ENOTDIR
}
