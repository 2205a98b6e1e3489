// Package apply makes a plan's writes: the only code in numairqd that
// writes to /proc and /sys or sets a thread's CPU affinity.
//
// An Applier makes a policy.Plan's writes (IRQ affinities, XPS maps, NAPI
// kthreads) and sorts each kernel error into a Kind, as irqbalance's
// activate.c does (docs/kernel.md §3.1). What an error teaches goes into
// the policy.Memory Apply returns, for the next plan: EIO/EPERM
// Memory.Refused, ENOSPC Memory.Full, EINVAL a rescan, EBUSY/EAGAIN a
// retry, ENOENT a freed IRQ; a success goes into Memory.Verify. Restore
// puts back what the Applier changed.
package apply

import (
	"context"
	"maps"
	"time"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
)

// Options tune an Applier. The zero value is the daemon's default.
type Options struct {
	// DryRun logs and counts the writes Apply would make and makes none.
	DryRun bool
	// Retries is how often an EBUSY/EAGAIN write is repeated (0: 3,
	// negative: none), Backoff the first wait, doubled for each next
	// (0: 10ms), Sleep the wait (nil: a timer that ends with the context).
	Retries int
	Backoff time.Duration
	Sleep   func(time.Duration)
	// Progress, if set, is called after every write attempt, to tell a
	// watchdog a long Apply is moving.
	Progress func()
	// Interrupts, if set, reads an IRQ's interrupt count after each
	// write, to tell a move still pending from one refused (policy.Verify).
	Interrupts func(irq int) (uint64, bool)
}

// Applier writes plans to the kernel and remembers what each target had
// before its first change, for Restore. For one goroutine only.
type Applier struct {
	w    Writer
	log  *zap.Logger
	opts Options

	// The *originals are the masks found before the first change, the
	// would* logs what a dry run last logged.
	originals     map[int]original
	wouldWrite    dryLog[irqKey]
	xpsOriginals  map[xpsKey]cpumask.Mask
	wouldXPS      dryLog[xpsKey]
	napiOriginals map[threadKey]cpumask.Mask
	wouldNAPI     dryLog[threadKey]
	warned        map[string]string // by XPS queue or NAPI thread: errno last warned of
}

// original is an IRQ's mask before numairqd first changed it.
type original struct {
	name string
	mask cpumask.Mask
}

// SetDryRun turns the dry run on or off from the next Apply on (observe
// and enforce). A dry run begun afresh logs each would-be write anew.
func (a *Applier) SetDryRun(on bool) {
	if on && !a.opts.DryRun {
		a.wouldWrite, a.wouldXPS, a.wouldNAPI = dryLog[irqKey]{}, dryLog[xpsKey]{}, dryLog[threadKey]{}
	}
	a.opts.DryRun = on
}

// DryRunShown is how many new would-be writes of each kind (IRQ, XPS,
// NAPI thread) a dry run logs at info each round; the rest go to debug,
// and one summary line counts them all.
const DryRunShown = 10

// New returns an Applier writing through w. A nil log discards logs.
func New(w Writer, log *zap.Logger, opts Options) *Applier {
	if log == nil {
		log = zap.NewNop()
	}
	switch {
	case opts.Retries == 0:
		opts.Retries = 3
	case opts.Retries < 0:
		opts.Retries = 0
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 10 * time.Millisecond
	}
	return &Applier{w: w, log: log, opts: opts, originals: map[int]original{}}
}

// Apply makes p's writes, skipping those onto CPUs found full, until ctx
// ends. It returns their outcomes and mem with what the kernel taught:
// refused IRQs, full CPUs and the writes to verify. The IRQs of
// mem.Backoff are not written.
func (a *Applier) Apply(ctx context.Context, p *policy.Plan, mem policy.Memory) (Result, policy.Memory) {
	mem = a.forget(p, mem)
	if a.opts.DryRun {
		a.wouldWrite.startRound()
		a.wouldXPS.startRound()
		a.wouldNAPI.startRound()
	}
	res := newResult()
	res.Unchanged = p.Unchanged()
	for _, w := range p.Writes() {
		if ctx.Err() != nil {
			break
		}
		switch {
		case w.Kind == policy.WriteXPS:
			a.applyXPS(w, &res)
		case w.Kind == policy.WriteNAPIThread:
			a.applyNAPI(w, &res)
		case a.opts.DryRun:
			dryRun(a, &a.wouldWrite, irqKey{w.IRQ, w.Name}, w, &res, "dry run: would set IRQ affinity",
				zap.Int("irq", w.IRQ), zap.String("name", w.Name),
				zap.Stringer("from", w.Before), zap.Stringer("to", w.After))
		case mem.Backoff[w.IRQ]:
			res.BackedOff++
		case w.After.IsSubsetOf(mem.Full):
			res.record(w, KindNoSpace, "ENOSPC")
		default:
			err := a.write(ctx, w.IRQ, w.Name, w.After)
			kind := irqKinds.of(err)
			res.record(w, kind, errnoName(err))
			a.learn(w, err, kind, &mem)
		}
	}
	if !a.opts.DryRun {
		mem.Verify = a.verifies(p, res, mem.Verify)
	} else if ctx.Err() == nil { // a round cut short saw only some of its writes
		a.wouldWrite.endRound()
		a.wouldXPS.endRound()
		a.wouldNAPI.endRound()
	}
	if res.DryRunLogged > 0 {
		a.log.Info("dry run: writes not made this round; GET /plan lists them all", zap.Int("irqs", res.DryRun),
			zap.Int("xps_queues", res.XPSByKind[KindDryRun]), zap.Int("napi_threads", res.NAPIByKind[KindDryRun]),
			zap.Int("new", res.DryRunLogged), zap.Int("new_shown", a.wouldWrite.shown()+a.wouldXPS.shown()+a.wouldNAPI.shown()))
	}
	return res, mem
}

// irqKey names an IRQ across rounds.
type irqKey struct {
	number int
	name   string
}

// dryRun records w to k as a dry run's, logging msg if l shows it new:
// at info for l's first DryRunShown this round, else at debug.
func dryRun[K comparable](a *Applier, l *dryLog[K], k K, w policy.Write, res *Result,
	msg string, fields ...zap.Field) {
	res.record(w, KindDryRun, "")
	if l.changed(k, w.After) {
		res.DryRunLogged++
		l.logged++
		level := zap.InfoLevel
		if l.logged > DryRunShown {
			level = zap.DebugLevel
		}
		a.log.Log(level, msg, fields...)
	}
}

// forget returns mem without what p shows gone (refusals of IRQs p does
// not list by name, full CPUs p does not allow), with p's held load
// placement. It drops originals of IRQ numbers p lists under another
// name and the NAPI threads and warnings p does not list.
func (a *Applier) forget(p *policy.Plan, mem policy.Memory) policy.Memory {
	names := map[int]string{}
	threads := map[threadKey]bool{}
	warnable := map[string]bool{}
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			names[q.Number] = q.Name
		}
		for _, t := range d.TxQueues {
			warnable[xpsWarnKey(t.Interface, t.Queue)] = true
		}
		for _, t := range d.NAPIThreads {
			threads[threadKey{t.PID, t.Comm}] = true
			warnable[napiWarnKey(t.PID, t.Comm)] = true
		}
	}
	gone := func(k threadKey, _ cpumask.Mask) bool { return !threads[k] }
	maps.DeleteFunc(a.napiOriginals, gone)
	maps.DeleteFunc(a.warned, func(k, _ string) bool { return !warnable[k] })
	mem.Refused = maps.Clone(mem.Refused)
	if mem.Refused == nil {
		mem.Refused = policy.Refusals{}
	}
	maps.DeleteFunc(mem.Refused, func(n int, r policy.Refusal) bool { return names[n] != r.Name })
	mem.Full = mem.Full.And(p.Allowed)
	mem.Held = p.Held()
	maps.DeleteFunc(a.originals, func(n int, o original) bool {
		name, ok := names[n]
		return ok && name != o.name
	})
	return mem
}

// learn logs w's outcome and keeps the original, refusal or full CPUs.
func (a *Applier) learn(w policy.Write, err error, kind Kind, mem *policy.Memory) {
	fields := []zap.Field{zap.Int("irq", w.IRQ), zap.String("name", w.Name), zap.Stringer("mask", w.After)}
	switch kind {
	case KindOK:
		if _, ok := a.originals[w.IRQ]; !ok && !w.Before.IsEmpty() {
			a.originals[w.IRQ] = original{name: w.Name, mask: w.Before}
		}
	case KindManaged:
		errno := errnoName(err)
		mem.Refused[w.IRQ] = policy.Refusal{Name: w.Name, Errno: errno}
		a.log.Info("the kernel refuses to move this IRQ (managed or unsteerable); leaving it alone",
			append(fields, zap.String("errno", errno), zap.Error(err))...)
	case KindNoSpace:
		mem.Full = mem.Full.Or(w.After)
		a.log.Warn("no free vector on the planned CPUs; the next plan places the IRQ on the next CPU of its device's order",
			append(fields, zap.Error(err))...)
	case KindVanished:
		a.log.Debug("IRQ vanished before its affinity was written", fields...)
	case KindStale:
		a.log.Warn("no CPU of the mask is online: the snapshot is stale",
			append(fields, zap.String("errno", errnoName(err)), zap.Error(err))...)
	case KindBusy:
		a.log.Warn("a previous move of the IRQ is still pending after every retry; leaving it for the next round",
			append(fields, zap.String("errno", errnoName(err)), zap.Error(err))...)
	default:
		a.log.Warn("cannot set IRQ affinity",
			append(fields, zap.Stringer("kind", kind), zap.String("errno", errnoName(err)), zap.Error(err))...)
	}
}

// write writes m to irq, repeating after EBUSY/EAGAIN up to Retries
// times with doubling backoff while ctx lives.
func (a *Applier) write(ctx context.Context, irq int, name string, m cpumask.Mask) error {
	backoff := a.opts.Backoff
	for attempt := 0; ; attempt++ {
		err := a.w.WriteAffinity(irq, m)
		if a.opts.Progress != nil {
			a.opts.Progress()
		}
		a.log.Debug("wrote IRQ affinity", zap.Int("irq", irq), zap.String("name", name), zap.Stringer("mask", m),
			zap.Int("attempt", attempt+1), zap.Error(err))
		if err == nil || !retryable(err) || attempt >= a.opts.Retries || !a.sleep(ctx, backoff) {
			return err
		}
		backoff *= 2
	}
}

// sleep waits d (Options.Sleep) and reports whether ctx is still live.
func (a *Applier) sleep(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	if a.opts.Sleep != nil {
		a.opts.Sleep(d)
		return ctx.Err() == nil
	}
	return Sleep(ctx, d)
}

// Sleep waits d, or less if ctx ends, and reports whether ctx is live.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// verifies returns the writes to verify after res, the outcome of p: the
// successful ones with their interrupt counts, and the earlier ones p
// found still outside their mask. Only a re-write p asked for uses a try.
func (a *Applier) verifies(p *policy.Plan, res Result, old policy.Verifies) policy.Verifies {
	out := policy.Verifies{}
	rewrite := map[int]bool{}
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			if v, ok := old[q.Number]; ok && q.EffectiveState > policy.EffectiveVerified {
				out[q.Number] = v
			}
			rewrite[q.Number] = q.EffectiveState == policy.EffectiveRewrite
		}
	}
	for _, o := range res.Writes {
		if o.Kind != KindOK || o.Write.Kind != policy.WriteIRQAffinity {
			continue
		}
		v := policy.Verify{Name: o.Name, Mask: o.After}
		if prev, ok := old[o.IRQ]; ok && rewrite[o.IRQ] && prev.Name == o.Name && prev.Mask.Equal(o.After) {
			v.Rewrites = prev.Rewrites + 1
		}
		if a.opts.Interrupts != nil {
			v.Count, v.Counted = a.opts.Interrupts(o.IRQ)
		}
		out[o.IRQ] = v
	}
	return out
}
