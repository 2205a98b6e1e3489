//go:build linux

package kernfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ReadTrimmed returns the file at path without surrounding white space.
// Errors are *fs.PathError; a non-regular or too long file ErrMalformed.
func ReadTrimmed(path string) (string, error) {
	var r Reader
	b, err := r.Read(path)
	return string(b), err
}

// ReadOptional is ReadTrimmed; ok is false, err nil, for a missing file.
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
// file descriptors. The zero value is ready; not for concurrent use.
type Reader struct {
	buf  []byte
	name []byte // the file being read, NUL-terminated for openat
}

// Read is ReadTrimmed into the reused buffer, valid until the next call.
func (r *Reader) Read(path string) ([]byte, error) {
	r.name = append(append(r.name[:0], path...), 0)
	b, _, err := r.read(atCWD, "", false)
	return b, err
}

// ReadAt is Read of name in the directory dirPath open as dirfd.
func (r *Reader) ReadAt(dirfd int, dirPath string, name []byte) ([]byte, error) {
	r.name = append(append(r.name[:0], name...), 0)
	b, _, err := r.read(dirfd, dirPath, false)
	return b, err
}

// ReadWithMode is Read that also returns the file's permission bits.
func (r *Reader) ReadWithMode(path string) ([]byte, fs.FileMode, error) {
	r.name = append(append(r.name[:0], path...), 0)
	return r.read(atCWD, "", true)
}

// atCWD is AT_FDCWD: openat of a path as open(2) takes it.
const atCWD = -100

// read reads r.name relative to dirfd, at dirPath ("" for atCWD).
func (r *Reader) read(dirfd int, dirPath string, withMode bool) ([]byte, fs.FileMode, error) {
	b, mode, err := r.readRaw(dirfd, dirPath, withMode)
	if rec := recorder(); rec != nil {
		rec.Record(Access{Op: OpFile, Path: filepath.Join(dirPath, string(r.name[:len(r.name)-1])), Data: b, Err: err})
	}
	return bytes.TrimSpace(b), mode, err
}

// readRaw is read without trimming.
func (r *Reader) readRaw(dirfd int, dirPath string, withMode bool) ([]byte, fs.FileMode, error) {
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
	check := func() error { // fstat, at most once
		if checked {
			return nil
		}
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
		r.buf = make([]byte, 512) // doubled up to MaxAttrSize+1
	}
	n := 0
	for {
		if n == len(r.buf) {
			if err := check(); err != nil {
				return fail("read", err)
			}
			if n > MaxAttrSize {
				return fail("read", TooLarge(MaxAttrSize))
			}
			r.buf = append(r.buf, make([]byte, min(len(r.buf), MaxAttrSize+1-len(r.buf)))...)
		}
		m, err := read(fd, r.buf[n:])
		if err == syscall.EAGAIN { // never a regular file
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
	if n == 0 { // or a FIFO without a writer
		if err := check(); err != nil {
			return fail("read", err)
		}
	}
	return r.buf[:n], mode, nil
}

// checkRegular rejects what attributes never are: a FIFO, a device.
func checkRegular(mode uint32) error {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return nil
	case syscall.S_IFDIR:
		return syscall.EISDIR
	}
	kind, ok := kinds[mode&syscall.S_IFMT]
	if !ok {
		kind = fmt.Sprintf("file type %#o", mode&syscall.S_IFMT)
	}
	return fmt.Errorf("%w: not a regular file (%s)", ErrMalformed, kind)
}

var kinds = map[uint32]string{
	syscall.S_IFIFO: "a named pipe", syscall.S_IFCHR: "a character device",
	syscall.S_IFBLK: "a block device", syscall.S_IFSOCK: "a socket",
}

// Links is the link count of the directory open as dirfd.
func Links(dirfd int, dirPath string) (uint64, error) {
	var st syscall.Stat_t
	if err := fstat(dirfd, &st); err != nil {
		return 0, &fs.PathError{Op: "fstat", Path: dirPath, Err: err}
	}
	return uint64(st.Nlink), nil
}

// Open opens a kernel file too long for Reader for streaming, refusing
// anything but a regular file; the caller bounds the read.
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
	if err := checkRegular(fi.Sys().(*syscall.Stat_t).Mode); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return f, nil
}

// openFlags: O_NONBLOCK opens a FIFO without waiting for a writer.
const openFlags = syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NONBLOCK

// ParseFile has parse read at most limit bytes of path, else TooLarge.
func ParseFile(path string, limit int64, parse func(io.Reader) error) error {
	f, err := Open(path)
	if err != nil {
		if rec := recorder(); rec != nil {
			rec.Record(Access{Op: OpFile, Path: path, Err: err})
		}
		return FileErr(path, err)
	}
	defer f.Close()
	lr := &io.LimitedReader{R: f, N: limit + 1}
	var in io.Reader = lr
	var seen *bytes.Buffer
	rec := recorder()
	if rec != nil {
		seen = new(bytes.Buffer)
		in = io.TeeReader(lr, seen)
	}
	err = parse(in)
	if rec != nil {
		_, cerr := io.Copy(io.Discard, in) // the whole file, whatever the parse took
		if lr.N <= 0 {
			cerr = TooLarge(limit)
		}
		rec.Record(Access{Op: OpFile, Path: path, Data: seen.Bytes(), Err: cerr})
	}
	if lr.N <= 0 { // the parse saw a cut file: the size is the error
		return FileErr(path, TooLarge(limit))
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}
