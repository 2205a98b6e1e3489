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
	// Retries is how many times an EBUSY/EAGAIN write is repeated: 0
	// means 3, a negative value none.
	Retries int
	// Backoff is the wait before the first retry, doubled before each
	// next one; 0 means 10ms.
	Backoff time.Duration
	// Sleep waits between retries; nil means a timer that returns early
	// when the context is done. Tests inject one that only records.
	Sleep func(time.Duration)
	// Progress, if set, is called after every write attempt, so a long
	// Apply can tell a watchdog it is moving.
	Progress func()
}

// Defaults filled in by New.
const (
	DefaultRetries = 3
	DefaultBackoff = 10 * time.Millisecond
)

// Applier writes plans to the kernel and remembers, across rounds, the
// IRQs the kernel refused to move and the masks it found before its
// first change of each IRQ. Not safe for concurrent use (see the
// package doc): call it from one goroutine.
type Applier struct {
	w    Writer
	log  *zap.Logger
	opts Options

	// refused are the IRQs whose write failed with EIO/EPERM, by number.
	// The name is part of the key: the same number requested again under
	// another name (a rebound device) is a new IRQ and is tried again.
	refused policy.Refusals
	// originals are the masks found before the first change, by number.
	originals map[int]original
}

// original is an IRQ's mask before numairqd first changed it.
type original struct {
	name string
	mask cpumask.Mask
}

// New returns an Applier writing through w. A nil log discards logs.
func New(w Writer, log *zap.Logger, opts Options) *Applier {
	if log == nil {
		log = zap.NewNop()
	}
	switch {
	case opts.Retries == 0:
		opts.Retries = DefaultRetries
	case opts.Retries < 0:
		opts.Retries = 0
	}
	if opts.Backoff <= 0 {
		opts.Backoff = DefaultBackoff
	}
	return &Applier{w: w, log: log, opts: opts, refused: policy.Refusals{}, originals: map[int]original{}}
}

// round is what one Apply shares between IRQs: the CPUs found to have
// no free vector (ENOSPC), so later IRQs do not try them again.
type round struct {
	full cpumask.Mask
}

// Refusals returns a copy of the IRQs the kernel refused to move, for
// the next policy.Compute.
func (a *Applier) Refusals() policy.Refusals { return maps.Clone(a.refused) }

// Apply writes every IRQ of p whose planned mask is set and differs
// from its current one, one write per IRQ, and returns the outcome of
// each. It stops early, leaving the rest for the next round, when ctx
// is done. p covers every device IRQ the machine has, so Apply first
// forgets the refusals of IRQs that are gone from it or carry another
// name, and the originals of IRQs now under another name.
func (a *Applier) Apply(ctx context.Context, p *policy.Plan) Result {
	a.forget(p)
	res := newResult()
	rd := &round{}
	for di := range p.Devices {
		d := &p.Devices[di]
		for _, q := range d.IRQs {
			if q.LeftAlone() {
				continue
			}
			if q.Planned.Equal(q.Current) {
				res.Unchanged++
				continue
			}
			if ctx.Err() != nil {
				return res
			}
			if a.opts.DryRun {
				a.log.Info("dry run: would set IRQ affinity", zap.Int("irq", q.Number), zap.String("name", q.Name),
					zap.Stringer("from", q.Current), zap.Stringer("to", q.Planned))
				res.record(q.Number, KindDryRun)
				continue
			}
			a.place(ctx, rd, d, q, &res)
		}
	}
	return res
}

// forget drops what is remembered about IRQs that p shows freed: a
// refusal whose IRQ is not in p under its name, an original whose
// number p lists under another name (the number was reused). Originals
// of IRQs p does not list stay, for Restore.
func (a *Applier) forget(p *policy.Plan) {
	names := map[int]string{}
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			names[q.Number] = q.Name
		}
	}
	maps.DeleteFunc(a.refused, func(n int, r policy.Refusal) bool { return names[n] != r.Name })
	maps.DeleteFunc(a.originals, func(n int, o original) bool {
		name, ok := names[n]
		return ok && name != o.name
	})
}

// place writes q's planned mask and, when the kernel has no free vector
// on those CPUs, walks on along the device's Order after them (wrapping,
// skipping CPUs full this round and CPUs already tried), one CPU at a
// time, like irqbalance marking a CPU full on ENOSPC.
func (a *Applier) place(ctx context.Context, rd *round, d *policy.Device, q policy.IRQ, res *Result) {
	target := q.Planned
	var err error
	if target.IsSubsetOf(rd.full) {
		a.log.Debug("planned CPUs have no free vector this round", zap.Int("irq", q.Number),
			zap.String("name", q.Name), zap.Stringer("planned", target))
	} else {
		err = a.write(ctx, q.Number, q.Name, target)
		if classify(err) != KindNoSpace {
			a.done(q, target, err, res)
			return
		}
		rd.full = rd.full.Or(target)
	}
	tried := target
	n := len(d.Order)
	startAt := -1
	for i, c := range d.Order {
		if target.Contains(c) {
			startAt = i
		}
	}
	for k := 1; k <= n; k++ {
		cpu := d.Order[(startAt+k+n)%n]
		if tried.Contains(cpu) || rd.full.Contains(cpu) {
			continue
		}
		m := cpumask.New(cpu)
		tried = tried.Or(m)
		if ctx.Err() != nil {
			break
		}
		err = a.write(ctx, q.Number, q.Name, m)
		if classify(err) == KindNoSpace {
			rd.full = rd.full.Or(m)
			continue
		}
		if err == nil {
			a.log.Warn("no free vector on the planned CPUs; placed the IRQ on a later CPU of the device's order",
				zap.Int("irq", q.Number), zap.String("name", q.Name), zap.Stringer("planned", target), zap.Int("cpu", cpu))
		}
		a.done(q, m, err, res)
		return
	}
	a.log.Warn("no free vector on any CPU tried; leaving the IRQ for the next round",
		zap.Int("irq", q.Number), zap.String("name", q.Name), zap.Stringer("planned", target),
		zap.Stringer("tried", tried), zap.Error(err))
	res.record(q.Number, KindNoSpace)
}

// done records the outcome of the last write of q (mask m, error err).
func (a *Applier) done(q policy.IRQ, m cpumask.Mask, err error, res *Result) {
	kind := classify(err)
	res.record(q.Number, kind)
	fields := []zap.Field{zap.Int("irq", q.Number), zap.String("name", q.Name), zap.Stringer("mask", m)}
	switch kind {
	case KindOK:
		if _, ok := a.originals[q.Number]; !ok && !q.Current.IsEmpty() {
			a.originals[q.Number] = original{name: q.Name, mask: q.Current}
		}
	case KindManaged:
		errno := errnoName(err)
		a.refused[q.Number] = policy.Refusal{Name: q.Name, Errno: errno}
		a.log.Info("the kernel refuses to move this IRQ (managed or unsteerable); leaving it alone",
			append(fields, zap.String("errno", errno), zap.Error(err))...)
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

// write makes one write of m to irq, repeating it after EBUSY/EAGAIN up
// to Retries times with doubling backoff, and gives up early when ctx
// is done.
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

// sleep waits d and reports whether ctx is still live.
func (a *Applier) sleep(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	if a.opts.Sleep != nil {
		a.opts.Sleep(d)
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
