package kernfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// ErrMalformed is wrapped by every error about kernel output that does
// not parse: a sysfs or procfs file whose content the kernel would not
// have written, or a netlink message that breaks its wire format. Test
// for it with errors.Is.
var ErrMalformed = errors.New("malformed")

// Malformed returns an error about the content of the file at path,
// "read PATH: malformed: WHY", that wraps ErrMalformed and whatever
// error the format wraps with %w.
func Malformed(path, format string, args ...any) error {
	return fmt.Errorf("read %s: %w: %w", path, ErrMalformed, fmt.Errorf(format, args...))
}

// ReadTrimmed returns the content of the file at path without
// surrounding white space (a sysfs attribute ends in a newline). An
// error is an *fs.PathError naming path; a missing file is
// fs.ErrNotExist.
func ReadTrimmed(path string) (string, error) {
	var r Reader
	b, err := r.Read(path)
	return string(b), err
}

// ReadOptional is ReadTrimmed for a file that exists only on some
// kernels, devices or configurations: ok is false, and err nil, when the
// file does not exist.
func ReadOptional(path string) (s string, ok bool, err error) {
	s, err = ReadTrimmed(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	return s, err == nil, err
}

// Reader reads many small kernel files with one reused buffer and raw
// file descriptors: an os.File per read costs allocations and poller
// registration, which adds up over /proc/irq/N/* for thousands of IRQs.
// The zero value is ready to use; a Reader is not safe for concurrent
// use.
type Reader struct {
	buf []byte
}

// Read is ReadTrimmed into the reused buffer: the result is valid until
// the next call.
func (r *Reader) Read(path string) ([]byte, error) {
	b, _, err := r.read(path, false)
	return b, err
}

// ReadWithMode is Read that also returns the file's permission bits,
// from fstat on the open file, so content and mode are of one file even
// if the path is replaced meanwhile. procfs shows with them what the
// kernel allows: /proc/irq/N/smp_affinity is 0444 when it refuses user
// affinity.
func (r *Reader) ReadWithMode(path string) ([]byte, fs.FileMode, error) {
	return r.read(path, true)
}

func (r *Reader) read(path string, wantMode bool) ([]byte, fs.FileMode, error) {
	fd, err := open(path)
	if err != nil {
		return nil, 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var mode fs.FileMode
	if wantMode {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return nil, 0, &fs.PathError{Op: "stat", Path: path, Err: err}
		}
		mode = fs.FileMode(st.Mode & 0o777)
	}
	if r.buf == nil {
		// Most attributes are a number or a short list; the buffer
		// doubles for the rest (a sysfs attribute is at most a page).
		r.buf = make([]byte, 512)
	}
	n := 0
	for {
		if n == len(r.buf) {
			r.buf = append(r.buf, make([]byte, len(r.buf))...)
		}
		m, err := syscall.Read(fd, r.buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, 0, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if m <= 0 {
			break
		}
		n += m
	}
	return bytes.TrimSpace(r.buf[:n]), mode, nil
}

func open(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}
