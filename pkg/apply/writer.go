package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"syscall"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/policy"
)

// Writer sets the affinity of one IRQ, the XPS map of one tx queue or
// the CPUs of one NAPI kthread. Errors wrap the errno; tests inject them.
type Writer interface {
	WriteAffinity(irq int, mask cpumask.Mask) error
	WriteXPS(iface string, queue int, mask cpumask.Mask) error
	PinThread(pid int, comm string, mask cpumask.Mask) error
}

// ErrEmptyMask refuses a write of an empty mask, never an affinity.
var ErrEmptyMask = errors.New("empty CPU mask")

// ProcWriter writes under the procfs and sysfs roots Proc and Sys
// ("/proc" and "/sys" on a host, fixture directories in tests).
type ProcWriter struct {
	Proc string
	Sys  string
	// Host says the roots are the running kernel's: only then are NAPI
	// threads pinned.
	Host bool
}

// WriteAffinity writes mask to <Proc>/irq/N/smp_affinity_list.
func (w ProcWriter) WriteAffinity(irq int, mask cpumask.Mask) error {
	path := filepath.Join(w.Proc, "irq", strconv.Itoa(irq), "smp_affinity_list")
	if mask.IsEmpty() {
		return fmt.Errorf("write %s %q: %w", path, "", ErrEmptyMask)
	}
	return writeOnce(path, mask.String(), nil)
}

// writeOnce writes val and a newline to path in one write, without
// O_CREAT. A write (not open) failing with ENOENT also wraps enoent.
func writeOnce(path, val string, enoent error) error {
	buf := []byte(val + "\n")
	n, err := kernfs.WriteOnce(path, buf)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		switch {
		case pe.Op == "open":
			return fmt.Errorf("open %s: %w", path, pe.Err)
		case enoent != nil && errors.Is(pe.Err, syscall.ENOENT):
			return fmt.Errorf("write %s %q: %w: %w", path, val, enoent, pe.Err)
		}
		return fmt.Errorf("write %s %q: %w", path, val, pe.Err)
	}
	if n != len(buf) { // procfs takes the whole buffer or fails
		return fmt.Errorf("write %s %q: short write (%d of %d bytes)", path, val, n, len(buf))
	}
	return nil
}

// WriteXPS writes mask in hex, the only syntax xps_cpus_store parses,
// to <Sys>/class/net/IF/queues/tx-N/xps_cpus. ENOENT from a
// single-queue device wraps inventory.ErrXPSUnsupported.
func (w ProcWriter) WriteXPS(iface string, queue int, mask cpumask.Mask) error {
	path := filepath.Join(w.Sys, "class", "net", iface, "queues", "tx-"+strconv.Itoa(queue), "xps_cpus")
	return writeOnce(path, mask.Hex(0), inventory.ErrXPSUnsupported)
}

// xpsKinds sorts XPS write errors: the file refusing the map
// (single-queue device, unresolvable traffic class), a missing file,
// no permission (CAP_NET_ADMIN, a read-only sysfs).
var xpsKinds = kindTable{
	{KindUnsupported, []error{inventory.ErrXPSUnsupported, syscall.EINVAL}},
	{KindVanished, []error{syscall.ENOENT}},
	{KindRefused, []error{syscall.EPERM, syscall.EACCES, syscall.EROFS}},
	{KindBusy, []error{syscall.EBUSY, syscall.EAGAIN}},
}

// xpsKey names a tx queue.
type xpsKey struct {
	iface string
	queue int
}

// xpsWarnKey is a tx queue's key in warned.
func xpsWarnKey(iface string, queue int) string { return "xps " + iface + " tx-" + strconv.Itoa(queue) }

// applyXPS makes one XPS write, or logs it in a dry run. It is not
// retried: the store waits for RTNL, so no EBUSY reaches userspace.
func (a *Applier) applyXPS(w policy.Write, res *Result) {
	k := xpsKey{w.Interface, w.Queue}
	warnKey := xpsWarnKey(w.Interface, w.Queue)
	fields := []zap.Field{zap.String("interface", w.Interface), zap.Int("queue", w.Queue), zap.Int("irq", w.IRQ),
		zap.Stringer("from", w.Before), zap.Stringer("to", w.After)}
	if a.opts.DryRun {
		dryRun(a, &a.wouldXPS, k, w, res, "dry run: would set XPS CPUs", fields...)
		return
	}
	err := a.w.WriteXPS(w.Interface, w.Queue, w.After)
	if a.opts.Progress != nil {
		a.opts.Progress()
	}
	kind := xpsKinds.of(err)
	res.record(w, kind, errnoName(err))
	switch kind {
	case KindOK:
		a.settled(warnKey)
		keepFirst(&a.xpsOriginals, k, w.Before)
		a.log.Debug("wrote XPS CPUs", fields...)
	case KindUnsupported:
		a.log.Info("the kernel takes no XPS map for this queue (single-queue device or unresolvable traffic class)",
			append(fields, zap.String("errno", errnoName(err)), zap.Error(err))...)
	case KindVanished:
		a.log.Debug("tx queue vanished before its XPS map was written", fields...)
	case KindRefused:
		a.warnOnce(warnKey, errnoName(err), "not permitted to set XPS CPUs (numairqd needs CAP_NET_ADMIN and a writable /sys); set xps: leave to stop trying",
			append(fields, zap.String("errno", errnoName(err)), zap.Error(err))...)
	default:
		a.warnOnce(warnKey, errnoName(err), "cannot set XPS CPUs", append(fields, zap.Stringer("kind", kind), zap.String("errno", errnoName(err)), zap.Error(err))...)
	}
}

// restoreXPS writes back each tx queue's XPS map from before Apply's
// first change, for the queues inv (nil: all) still lists.
func (a *Applier) restoreXPS(ctx context.Context, inv *inventory.Inventory, res *Result) {
	var listed map[xpsKey]bool
	if inv != nil {
		listed = map[xpsKey]bool{}
		for _, d := range inv.Devices {
			for _, q := range d.TxQueues {
				listed[xpsKey{q.Interface, q.Queue}] = true
			}
		}
	}
	byQueue := func(x, y xpsKey) int {
		return cmp.Or(cmp.Compare(x.iface, y.iface), cmp.Compare(x.queue, y.queue))
	}
	written := restoreAll(ctx, a.xpsOriginals, byQueue, func(k xpsKey, m cpumask.Mask) (bool, bool) {
		if listed != nil && !listed[k] {
			return false, true
		}
		w := policy.Write{Kind: policy.WriteXPS, IRQ: -1, Name: k.iface + " tx-" + strconv.Itoa(k.queue), Interface: k.iface, Queue: k.queue, After: m}
		err := a.w.WriteXPS(k.iface, k.queue, m)
		kind := xpsKinds.of(err)
		res.record(w, kind, errnoName(err))
		if kind == KindOK || kind == KindVanished || kind == KindUnsupported {
			return kind == KindOK, true
		}
		a.log.Warn("cannot restore XPS CPUs", zap.String("interface", k.iface), zap.Int("queue", k.queue),
			zap.Stringer("mask", m), zap.Stringer("kind", kind), zap.Error(err))
		return false, false
	})
	if written > 0 {
		a.log.Info("restored XPS maps found at start", zap.Int("written", written))
	}
}
