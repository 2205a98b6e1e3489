package kernfs

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/numairqd/numairqd/pkg/malformed"
)

// ErrMalformed is wrapped by every error about kernel output that does
// not parse: a sysfs or procfs file, or a netlink message.
var ErrMalformed = malformed.Err

// MaxAttrSize is the most a Reader reads of one file: a sysfs attribute
// is at most a page (up to 64 KiB on arm64 and ppc64), and a longer file
// read whole would grow the daemon without bound.
const MaxAttrSize = 64 << 10

// Malformed returns "read PATH: malformed: WHY", wrapping ErrMalformed
// and whatever the format wraps with %w. Quote values with Quote.
func Malformed(path, format string, args ...any) error {
	return fmt.Errorf("read %s: %w: %w", path, ErrMalformed, fmt.Errorf(format, args...))
}

// QuoteLimit is how many bytes of a value Quote shows.
const QuoteLimit = malformed.QuoteLimit

// Quote returns v as %q does, cut to at most QuoteLimit bytes of quoted
// text and then followed by "... (N bytes)", so that a 5 MB file gives
// a short error.
func Quote[T ~string | ~[]byte](v T) string { return malformed.Quote(v) }

// FileErr is "read PATH: ERR", naming path once: an *fs.PathError of
// path is replaced by its cause, and errors.Is(err, fs.ErrNotExist) holds.
func FileErr(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		err = pe.Err
	}
	return fmt.Errorf("read %s: %w", path, err)
}

// TooLarge is the error, wrapping ErrMalformed, for a kernel file longer
// than limit bytes.
func TooLarge(limit int64) error {
	return fmt.Errorf("%w: longer than the limit of %d bytes", ErrMalformed, limit)
}
