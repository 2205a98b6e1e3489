package kernfs

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/numairqd/numairqd/pkg/malformed"
)

// ErrMalformed is wrapped by every error about unparsable kernel output.
var ErrMalformed = malformed.Err

// MaxAttrSize is the most a Reader reads of one file: the largest page.
const MaxAttrSize = 64 << 10

// Malformed returns "read PATH: malformed: WHY", wrapping ErrMalformed
// and whatever the format wraps with %w. Quote values with Quote.
func Malformed(path, format string, args ...any) error {
	return fmt.Errorf("read %s: %w: %w", path, ErrMalformed, fmt.Errorf(format, args...))
}

// QuoteLimit is how many bytes of a value Quote shows.
const QuoteLimit = malformed.QuoteLimit

// Quote is malformed.Quote: v as %q does, cut to QuoteLimit bytes.
func Quote[T ~string | ~[]byte](v T) string { return malformed.Quote(v) }

// FileErr is "read PATH: ERR", naming path once.
func FileErr(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		err = pe.Err
	}
	return fmt.Errorf("read %s: %w", path, err)
}

// TooLarge is the ErrMalformed of a file longer than limit bytes.
func TooLarge(limit int64) error {
	return fmt.Errorf("%w: longer than the limit of %d bytes", ErrMalformed, limit)
}
