package apply

import (
	"errors"
	"strconv"
	"syscall"
	"time"
)

// Outcome kinds, the keys of Result.ByKind and the values of Result.Failed.
const (
	// KindOK: the IRQ was written (on its planned CPUs or, after ENOSPC,
	// on a later CPU of its device's order).
	KindOK = "ok"
	// KindManaged: the kernel refused with EIO or EPERM; the IRQ is never
	// written again (until it is re-requested under another name).
	KindManaged = "managed"
	// KindNoSpace: ENOSPC on the planned CPUs and on every CPU tried after.
	KindNoSpace = "no_space"
	// KindStale: EINVAL, no CPU of the mask is online; rescan.
	KindStale = "stale"
	// KindBusy: EBUSY or EAGAIN after every retry; try next round.
	KindBusy = "busy"
	// KindVanished: ENOENT, the IRQ was freed.
	KindVanished = "vanished"
	// KindError: any other error (EOVERFLOW, ERANGE, ENOMEM, ...).
	KindError = "error"
)

// Result is what one Apply or Restore did.
type Result struct {
	// Written counts successful writes (one per IRQ), Unchanged the IRQs
	// whose planned mask equals the current one, DryRun the writes a
	// dry run would have made.
	Written, Unchanged, DryRun int
	// ByKind counts the outcome of every IRQ written or tried, by Kind*.
	ByKind map[string]int
	// Failed maps each IRQ that could not be placed (KindNoSpace,
	// KindStale, KindBusy or KindError) to its kind.
	Failed map[int]string
	// Stale is set when a write got EINVAL: the snapshot planned from is
	// out of date and the caller should rescan now.
	Stale bool
	// Duration is how long the call took.
	Duration time.Duration
}

func newResult() Result {
	return Result{ByKind: map[string]int{}, Failed: map[int]string{}}
}

// record counts one outcome.
func (r *Result) record(irq int, kind string) {
	r.ByKind[kind]++
	switch kind {
	case KindOK:
		r.Written++
	case KindManaged, KindVanished:
	case KindStale:
		r.Stale = true
		r.Failed[irq] = kind
	default:
		r.Failed[irq] = kind
	}
}

// classify maps a write error to its outcome kind.
func classify(err error) string {
	switch {
	case err == nil:
		return KindOK
	case errors.Is(err, syscall.EIO), errors.Is(err, syscall.EPERM):
		return KindManaged
	case errors.Is(err, syscall.ENOSPC):
		return KindNoSpace
	case errors.Is(err, syscall.EINVAL):
		return KindStale
	case retryable(err):
		return KindBusy
	case errors.Is(err, syscall.ENOENT):
		return KindVanished
	default:
		return KindError
	}
}

// retryable reports whether err says a previous move is still pending.
func retryable(err error) bool {
	return errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.EAGAIN)
}

// errnoNames are the errnos an affinity write can return (kernel.md
// §3.1) and a few that a broken setup gives.
var errnoNames = map[syscall.Errno]string{
	syscall.EIO:       "EIO",
	syscall.EPERM:     "EPERM",
	syscall.ENOSPC:    "ENOSPC",
	syscall.EINVAL:    "EINVAL",
	syscall.EBUSY:     "EBUSY",
	syscall.EAGAIN:    "EAGAIN",
	syscall.ENOENT:    "ENOENT",
	syscall.EOVERFLOW: "EOVERFLOW",
	syscall.ERANGE:    "ERANGE",
	syscall.ENOMEM:    "ENOMEM",
	syscall.EACCES:    "EACCES",
	syscall.EROFS:     "EROFS",
	syscall.EFAULT:    "EFAULT",
	syscall.ENODEV:    "ENODEV",
	syscall.ENXIO:     "ENXIO",
	syscall.EISDIR:    "EISDIR",
	syscall.ENOTDIR:   "ENOTDIR",
}

// errnoName is the symbolic name of the errno err wraps ("EIO"),
// "errno N" for one not in the table and "" when err wraps none.
func errnoName(err error) string {
	var e syscall.Errno
	if !errors.As(err, &e) {
		return ""
	}
	if n, ok := errnoNames[e]; ok {
		return n
	}
	return "errno " + strconv.Itoa(int(e))
}
