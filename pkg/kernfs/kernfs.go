//go:build linux

package kernfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unicode/utf8"
)

// ErrMalformed is wrapped by every error about kernel output that does
// not parse: a sysfs or procfs file whose content the kernel would not
// have written, or a netlink message that breaks its wire format. Test
// for it with errors.Is.
var ErrMalformed = errors.New("malformed")

// MaxAttrSize is the most ReadTrimmed and Reader read of one file. A
// sysfs attribute is at most a page (PAGE_SIZE, 4 KiB on x86, up to
// 64 KiB on arm64 and ppc64); the longest list the project reads, a
// cpulist of MaxCPUs alternate CPUs, is about 38 KiB. A longer file is
// not one the kernel wrote, and reading it whole would let a stray
// multi-megabyte file grow the daemon without bound.
const MaxAttrSize = 64 << 10

// Malformed returns an error about the content of the file at path,
// "read PATH: malformed: WHY", that wraps ErrMalformed and whatever
// error the format wraps with %w. Quote values with Quote, so a huge
// file gives a short error.
func Malformed(path, format string, args ...any) error {
	return fmt.Errorf("read %s: %w: %w", path, ErrMalformed, fmt.Errorf(format, args...))
}

// QuoteLimit is how many bytes of a value Quote shows.
const QuoteLimit = 100

// Quote returns v as a Go string literal, like %q, cut to at most
// QuoteLimit bytes of quoted text; a cut value is followed by
// "... (N bytes)" with its full length. Every error that quotes kernel
// output uses it, so a 5 MB file gives an error of a few hundred bytes.
func Quote[T ~string | ~[]byte](v T) string {
	n := len(v)
	head := string(v[:min(n, QuoteLimit)]) // each byte quotes to at least one
	b := make([]byte, 0, QuoteLimit+32)
	b = append(b, '"')
	used := 0
	for used < len(head) {
		_, size := utf8.DecodeRuneInString(head[used:])
		q := strconv.Quote(head[used : used+size])
		q = q[1 : len(q)-1]
		if len(b)-1+len(q) > QuoteLimit {
			break
		}
		b = append(b, q...)
		used += size
	}
	b = append(b, '"')
	if used < n {
		b = fmt.Appendf(b, "... (%d bytes)", n)
	}
	return string(b)
}

// ReadTrimmed returns the content of the file at path without
// surrounding white space (a sysfs attribute ends in a newline). An
// error is an *fs.PathError naming path; a missing file is
// fs.ErrNotExist; a file that is not a regular file, or is longer than
// MaxAttrSize, wraps ErrMalformed.
func ReadTrimmed(path string) (string, error) {
	var r Reader
	b, err := r.Read(path)
	return string(b), err
}

// ReadOptional is ReadTrimmed for a file that exists only on some
// kernels, devices or configurations: ok is false, and err nil, when the
// file does not exist.
func ReadOptional(path string) (s string, ok bool, err error) {
	var r Reader
	return r.ReadOptional(path)
}

// ReadOptional is the package's ReadOptional with the Reader's buffers.
func (r *Reader) ReadOptional(path string) (s string, ok bool, err error) {
	b, err := r.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	return string(b), err == nil, err
}

// Reader reads many small kernel files with one reused buffer and raw
// file descriptors: an os.File per read costs allocations and poller
// registration, which adds up over /proc/irq/N/* for thousands of IRQs.
// A read is three system calls, open, read and close: a read that
// returns less than the buffer holds is the whole file, as it is for the
// regular files and seq_file attributes of procfs and sysfs. Only an
// empty or a full read costs an fstat, to refuse what is not a regular
// file. It reads at most MaxAttrSize bytes of a file. The zero value is
// ready to use; a Reader is not safe for concurrent use.
type Reader struct {
	buf  []byte
	name []byte // the file being read, NUL-terminated for openat
}

// Read is ReadTrimmed into the reused buffer: the result is valid until
// the next call.
func (r *Reader) Read(path string) ([]byte, error) {
	r.name = append(append(r.name[:0], path...), 0)
	b, _, err := r.read(atCWD, "", false)
	return b, err
}

// ReadAt is Read of the file name in the directory open as dirfd
// (openat(2)), which saves walking the directory's path for each of
// thousands of files; dirPath is that directory's path, for errors.
// name is a byte slice so that a caller reading thousands of files
// builds their names in one reused buffer.
func (r *Reader) ReadAt(dirfd int, dirPath string, name []byte) ([]byte, error) {
	r.name = append(append(r.name[:0], name...), 0)
	b, _, err := r.read(dirfd, dirPath, false)
	return b, err
}

// ReadWithMode is Read that also returns the file's permission bits,
// from fstat on the open file, so content and mode are of one file even
// if the path is replaced meanwhile. procfs shows with them what the
// kernel allows: /proc/irq/N/smp_affinity is 0444 when it refuses user
// affinity.
func (r *Reader) ReadWithMode(path string) ([]byte, fs.FileMode, error) {
	r.name = append(append(r.name[:0], path...), 0)
	return r.read(atCWD, "", true)
}

// atCWD is AT_FDCWD: openat of a path as open(2) takes it.
const atCWD = -100

// read reads the file r.name relative to dirfd, the directory at
// dirPath ("" for atCWD), which errors name with it.
func (r *Reader) read(dirfd int, dirPath string, withMode bool) ([]byte, fs.FileMode, error) {
	fail := func(op string, err error) ([]byte, fs.FileMode, error) {
		path := string(r.name[:len(r.name)-1])
		if dirPath != "" {
			path = filepath.Join(dirPath, path)
		}
		return nil, 0, &fs.PathError{Op: op, Path: path, Err: err}
	}
	if bytes.IndexByte(r.name[:len(r.name)-1], 0) >= 0 {
		return fail("open", syscall.EINVAL) // as open(2) of a Go string with a NUL
	}
	fd, err := openAt(dirfd, r.name, openFlags)
	if err != nil {
		return fail("open", err)
	}
	defer closeFD(fd)
	var mode fs.FileMode
	checked := false
	check := func() error {
		checked = true
		var st syscall.Stat_t
		if err := fstat(fd, &st); err != nil {
			return err
		}
		mode = fs.FileMode(st.Mode & 0o777)
		return checkRegular(st.Mode)
	}
	if withMode {
		if err := check(); err != nil {
			return fail("read", err)
		}
	}
	if r.buf == nil {
		// Most attributes are a number or a short list; the buffer
		// doubles for the rest, up to one byte past the limit, which
		// tells a file of exactly MaxAttrSize bytes from a longer one.
		r.buf = make([]byte, 512)
	}
	n := 0
	for {
		if n == len(r.buf) {
			// A full buffer: a long attribute, or a device that never
			// ends.
			if !checked {
				if err := check(); err != nil {
					return fail("read", err)
				}
			}
			if n > MaxAttrSize {
				return fail("read", TooLarge(MaxAttrSize))
			}
			r.buf = append(r.buf, make([]byte, min(len(r.buf), MaxAttrSize+1-len(r.buf)))...)
		}
		m, err := read(fd, r.buf[n:])
		if err == syscall.EAGAIN && !checked {
			// Only what is not a regular file says "try again".
			if err := check(); err != nil {
				return fail("read", err)
			}
		}
		if err != nil {
			return fail("read", err)
		}
		n += max(m, 0)
		if m <= 0 || n < len(r.buf) {
			break
		}
	}
	if n == 0 && !checked {
		// An empty read is also what a FIFO without a writer gives.
		if err := check(); err != nil {
			return fail("read", err)
		}
	}
	return bytes.TrimSpace(r.buf[:n]), mode, nil
}

// TooLarge is the error, wrapping ErrMalformed, for a kernel file longer
// than limit bytes: "malformed: longer than the limit of N bytes".
func TooLarge(limit int64) error {
	return fmt.Errorf("%w: longer than the limit of %d bytes", ErrMalformed, limit)
}

// checkRegular rejects what sysfs and procfs attributes never are: a
// FIFO would block a read forever, a device such as /dev/zero never
// ends. A directory keeps its usual EISDIR.
func checkRegular(mode uint32) error {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return nil
	case syscall.S_IFDIR:
		return syscall.EISDIR
	}
	return fmt.Errorf("%w: not a regular file (%s)", ErrMalformed, kind(mode))
}

func kind(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
		return "a named pipe"
	case syscall.S_IFCHR:
		return "a character device"
	case syscall.S_IFBLK:
		return "a block device"
	case syscall.S_IFSOCK:
		return "a socket"
	}
	return fmt.Sprintf("file type %#o", mode&syscall.S_IFMT)
}

// Open opens a kernel file for streaming, for files too long for Reader
// such as /proc/interrupts. Like Reader it never blocks on a FIFO and
// refuses anything but a regular file; errors are *fs.PathError naming
// path. The caller bounds how much it reads.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		f.Close()
		return nil, &fs.PathError{Op: "stat", Path: path, Err: errors.ErrUnsupported}
	}
	if err := checkRegular(st.Mode); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return f, nil
}

// openFlags are the flags of every open. O_NONBLOCK: opening a FIFO for
// reading would otherwise wait for a writer; the read then finds it is
// one. It changes nothing for the regular files sysfs and procfs
// attributes are.
const openFlags = syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NONBLOCK
