package apply

import (
	"errors"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/numairqd/numairqd/pkg/policy"
)

// Kind is the outcome of one IRQ in an Apply or Restore.
type Kind uint8

// The outcome kinds, the result label of numairqd_*_writes_total.
const (
	KindOK          Kind = iota // written
	KindDryRun                  // a dry run would have written it
	KindManaged                 // EIO or EPERM: not written again until renamed
	KindNoSpace                 // ENOSPC: no free vector on the CPUs; the next plan avoids them
	KindStale                   // EINVAL: no CPU of the mask is online; rescan
	KindBusy                    // EBUSY or EAGAIN after every retry; try next round
	KindVanished                // ENOENT: the IRQ was freed (or the queue, the thread gone)
	KindError                   // any other error
	KindUnsupported             // an XPS map the queue refuses (single-queue device)
	// KindRefused: a NAPI pin the kernel will not make as asked (EPERM,
	// EINVAL, Errno "restricted"), or an XPS map the daemon may not write
	// (EPERM, EACCES, EROFS).
	KindRefused
	numKinds
)

var kindNames = [numKinds]string{"ok", "dry_run", "managed", "no_space", "stale", "busy", "vanished", "error", "unsupported", "refused"}

// Kinds are the outcome kinds of IRQ writes, in order.
func Kinds() []Kind {
	return []Kind{KindOK, KindDryRun, KindManaged, KindNoSpace, KindStale, KindBusy, KindVanished, KindError}
}

// NAPIKinds are the outcome kinds a NAPI thread write can have.
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
	Writes                     []Outcome
	Written, Unchanged, DryRun int          // IRQs written, already placed, dry-run
	ByKind                     map[Kind]int // outcomes of the IRQ writes
	Failed                     map[int]Kind // IRQs not placed (Kind.Failed)
	// Stale is set when an IRQ write got EINVAL: rescan now.
	Stale bool
	// XPSByKind and NAPIByKind count XPS and NAPI thread outcomes.
	XPSByKind   map[Kind]int
	XPSWritten  int
	NAPIByKind  map[Kind]int
	NAPIWritten int
	// BackedOff counts the IRQ writes skipped for a fight's backoff.
	BackedOff int
	// DryRunLogged counts the would-be writes a dry run logged: the new
	// ones, DryRunShown of each kind at info, the rest at debug.
	DryRunLogged int
}

func newResult() Result {
	return Result{ByKind: map[Kind]int{}, Failed: map[int]Kind{}, XPSByKind: map[Kind]int{}, NAPIByKind: map[Kind]int{}}
}

// record counts one outcome.
func (r *Result) record(w policy.Write, kind Kind, errno string) {
	r.Writes = append(r.Writes, Outcome{Write: w, Kind: kind, Errno: errno})
	switch w.Kind {
	case policy.WriteXPS:
		r.XPSByKind[kind]++
		if kind == KindOK {
			r.XPSWritten++
		}
		return
	case policy.WriteNAPIThread:
		r.NAPIByKind[kind]++
		if kind == KindOK {
			r.NAPIWritten++
		}
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

// kindTable maps errors to outcome kinds, the first match winning.
type kindTable []struct {
	kind Kind
	errs []error
}

// of is err's kind: KindOK for nil, KindError for one t does not list.
func (t kindTable) of(err error) Kind {
	if err == nil {
		return KindOK
	}
	for _, e := range t {
		if slices.ContainsFunc(e.errs, func(target error) bool { return errors.Is(err, target) }) {
			return e.kind
		}
	}
	return KindError
}

// irqKinds sorts IRQ affinity write errors (docs/kernel.md §3.1).
var irqKinds = kindTable{
	{KindManaged, []error{syscall.EIO, syscall.EPERM}},
	{KindNoSpace, []error{syscall.ENOSPC}},
	{KindStale, []error{syscall.EINVAL}},
	{KindBusy, []error{syscall.EBUSY, syscall.EAGAIN}},
	{KindVanished, []error{syscall.ENOENT}},
}

// retryable reports whether err says a previous move is still pending.
func retryable(err error) bool {
	return errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.EAGAIN)
}

// errnoName names the errno err wraps ("EIO", "errno N"), "" for none.
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
