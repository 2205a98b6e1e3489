package apply

import (
	"errors"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/numairqd/numairqd/pkg/policy"
)

// Kind is the outcome of one IRQ in an Apply or Restore.
type Kind uint8

// The outcome kinds. Kinds lists those of IRQ writes, the values of
// numairqd_affinity_writes_total{result}; XPSKinds those of XPS writes,
// the values of numairqd_xps_writes_total{result}; NAPIKinds those of
// NAPI thread writes, of numairqd_napi_thread_writes_total{result}.
const (
	// KindOK: the IRQ was written.
	KindOK Kind = iota
	// KindDryRun: a dry run would have written the IRQ.
	KindDryRun
	// KindManaged: the kernel refused with EIO or EPERM; the IRQ is never
	// written again (until it is re-requested under another name).
	KindManaged
	// KindNoSpace: ENOSPC, no free vector on the planned CPUs; the next
	// plan avoids them.
	KindNoSpace
	// KindStale: EINVAL, no CPU of the mask is online; rescan.
	KindStale
	// KindBusy: EBUSY or EAGAIN after every retry; try next round.
	KindBusy
	// KindVanished: ENOENT, the IRQ was freed.
	KindVanished
	// KindError: any other error (EOVERFLOW, ERANGE, ENOMEM, ...).
	KindError
	// KindUnsupported: an XPS map the queue's file refuses (ENOENT
	// from a single-queue device, EINVAL for an unresolvable traffic
	// class); only XPS writes have it.
	KindUnsupported
	// KindRefused: a NAPI kthread the kernel will not pin as asked
	// (EPERM without CAP_SYS_NICE; EINVAL for no CPU of the mask in its
	// cpuset, or PF_NO_SETAFFINITY; Errno "restricted" when its cpuset
	// kept only part of the mask), or an XPS map the daemon may not
	// write (EPERM without CAP_NET_ADMIN, EACCES, EROFS); only NAPI
	// thread and XPS writes have it.
	KindRefused
	numKinds
)

var kindNames = [numKinds]string{"ok", "dry_run", "managed", "no_space", "stale", "busy", "vanished", "error", "unsupported", "refused"}

// Kinds are the outcome kinds of IRQ writes, in order: all but
// KindUnsupported and KindRefused, which only XPS and NAPI thread
// writes have.
func Kinds() []Kind {
	ks := make([]Kind, KindUnsupported)
	for i := range ks {
		ks[i] = Kind(i)
	}
	return ks
}

// NAPIKinds are the outcome kinds a NAPI thread write can have, the
// values of numairqd_napi_thread_writes_total{result}.
func NAPIKinds() []Kind {
	return []Kind{KindOK, KindDryRun, KindVanished, KindRefused, KindError}
}

// XPSKinds are the outcome kinds an XPS write can have.
func XPSKinds() []Kind {
	return []Kind{KindOK, KindDryRun, KindUnsupported, KindBusy, KindVanished, KindRefused, KindError}
}

// String is the kind's name: "ok", "no_space", ...
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText makes kinds read as their names in logs and JSON.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Failed says whether the IRQ was meant to be placed and is not.
func (k Kind) Failed() bool {
	switch k {
	case KindNoSpace, KindStale, KindBusy, KindError:
		return true
	}
	return false
}

// Outcome is one write of a round and what came of it.
type Outcome struct {
	policy.Write
	Kind Kind
	// Errno names the error ("ENOSPC"), "" for none.
	Errno string
}

// Result is what one Apply or Restore did.
type Result struct {
	// Writes are the writes tried, in order, with their outcomes.
	Writes []Outcome
	// Written counts successful writes (one per IRQ), Unchanged the IRQs
	// already where planned, DryRun the writes a dry run would have made.
	Written, Unchanged, DryRun int
	// ByKind counts the outcome of every write tried.
	ByKind map[Kind]int
	// Failed maps each IRQ that could not be placed to its kind (one
	// with Kind.Failed).
	Failed map[int]Kind
	// Stale is set when an IRQ write got EINVAL: the snapshot planned
	// from is out of date and the caller should rescan now.
	Stale bool
	// XPSByKind counts the outcome of every XPS write tried, which the
	// counts above leave out (they are the IRQs'); XPSWritten counts
	// the successful ones.
	XPSByKind  map[Kind]int
	XPSWritten int
	// NAPIByKind and NAPIWritten are the same for NAPI thread writes.
	NAPIByKind  map[Kind]int
	NAPIWritten int
	// DryRunLogged counts the would-be writes of IRQs, XPS maps and NAPI
	// threads a dry run logged: those new or changed since the last
	// round (the rest it logged before).
	DryRunLogged int
}

func newResult() Result {
	return Result{ByKind: map[Kind]int{}, Failed: map[int]Kind{}, XPSByKind: map[Kind]int{}, NAPIByKind: map[Kind]int{}}
}

// record counts one outcome.
func (r *Result) record(w policy.Write, kind Kind, errno string) {
	r.Writes = append(r.Writes, Outcome{Write: w, Kind: kind, Errno: errno})
	if w.Kind == policy.WriteXPS {
		r.XPSByKind[kind]++
		if kind == KindOK {
			r.XPSWritten++
		}
		return
	}
	if w.Kind == policy.WriteNAPIThread {
		r.NAPIByKind[kind]++
		if kind == KindOK {
			r.NAPIWritten++
		}
		// Never Stale: a pin the kernel refuses is KindRefused
		// (classifyNAPI), which a new plan would not change.
		return
	}
	r.ByKind[kind]++
	switch {
	case kind == KindOK:
		r.Written++
	case kind == KindDryRun:
		r.DryRun++
	case kind.Failed():
		r.Failed[w.IRQ] = kind
		r.Stale = r.Stale || kind == KindStale
	}
}

// classify maps a write error to its outcome kind.
func classify(err error) Kind {
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

// errnoName is the symbolic name of the errno err wraps ("EIO"),
// "errno N" for one unix does not name and "" when err wraps none. The
// errnos an affinity write can return are in docs/kernel.md §3.1.
func errnoName(err error) string {
	var e syscall.Errno
	if !errors.As(err, &e) {
		return ""
	}
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return "errno " + strconv.Itoa(int(e))
}
