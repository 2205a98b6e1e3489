// Package malformed holds the sentinel for kernel output that does not
// parse and the quoting its errors use, for packages that build anywhere.
package malformed

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Err is wrapped by every error about kernel output that does not parse;
// kernfs.ErrMalformed is the same value.
var Err = errors.New("malformed")

// QuoteLimit is how many bytes of a value Quote shows.
const QuoteLimit = 100

// Quote returns v as %q does, cut to at most QuoteLimit bytes of quoted
// text and then followed by "... (N bytes)".
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
