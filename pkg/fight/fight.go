// Package fight tells when another writer (irqbalance, tuned, udev, a
// script) keeps moving IRQs numairqd placed, and backs off from them.
//
// A Tracker remembers, per IRQ, the mask numairqd last wrote. A round
// that reads the IRQ elsewhere while the plan still wants that mask, and
// was not caused by an event after which drivers reset affinities
// themselves (CPU hotplug, a device or channel change), counts an
// overwrite. Overwrites overwrites within Window make a fight: the IRQ is
// then rewritten only after growing intervals, Base doubled after every
// rewrite the other writer undoes, up to Cap, so that the placement is
// whole again at most Cap and a round after the other writer stops. A
// rewrite that stays for Base ends the fight. The Tracker is pure: the
// caller gives it the plan, the writes and the time.
package fight

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
)

// The thresholds and the backoff.
const (
	Overwrites = 3               // overwrites within Window that make a fight
	Window     = 5 * time.Minute // how far back overwrites count
	Base       = 15 * time.Second
	Cap        = 4 * time.Minute
)

// Fight is one IRQ another writer keeps moving, as /status shows it.
type Fight struct {
	IRQ    int          `json:"irq"`
	Name   string       `json:"name"`
	Device string       `json:"device"` // PCI address, "" for none
	Want   cpumask.Mask `json:"want"`   // what numairqd writes
	Found  cpumask.Mask `json:"found"`  // what the other writer last left
	Writer Writer       `json:"writer"`
	Since  time.Time    `json:"since"`
	// Overwrites counts the other writer's changes seen, Rewrites
	// numairqd's writes since the fight began.
	Overwrites int `json:"overwrites"`
	Rewrites   int `json:"rewrites"`
	// Interval is the backoff now; Next when the IRQ is next rewritten.
	Interval time.Duration `json:"-"`
	Next     time.Time     `json:"next_rewrite"`
}

// irq is what the Tracker remembers of one IRQ numairqd wrote.
type irq struct {
	name  string
	wrote cpumask.Mask // the mask numairqd last wrote
	at    time.Time    // when
	fresh bool         // no overwrite seen since the write
	seen  []time.Time  // the last overwrites, at most Overwrites
	fight *Fight
}

// Tracker holds the IRQs numairqd wrote and their fights, by number.
// The zero value is ready; for one goroutine.
type Tracker struct {
	irqs map[int]*irq
}

// Round is what Observe found in one round.
type Round struct {
	// Hold are the IRQs whose writes wait for their backoff this round.
	Hold map[int]bool
	// Started, Rewrite and Ended are fights begun, rewritten this round
	// and ended (the rewrite stayed, the plan changed, the IRQ went).
	Started, Rewrite, Ended []Fight
}

// Observe compares p's current masks with what numairqd wrote before p
// was applied; reset says the round follows an event after which
// drivers reset affinities. It forgets the IRQs p no longer places.
func (t *Tracker) Observe(p *policy.Plan, now time.Time, reset bool) Round {
	r := Round{Hold: map[int]bool{}}
	placed := map[int]bool{}
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			e := t.irqs[q.Number]
			if e == nil || q.LeftAlone() || e.name != q.Name || !q.Planned.Equal(e.wrote) {
				continue // a plan change is no overwrite
			}
			placed[q.Number] = true
			if e.observe(q, now, reset, &r) {
				e.fight.Device = d.PCI
				r.Started = append(r.Started, *e.fight)
			}
		}
	}
	for n, e := range t.irqs {
		if !placed[n] {
			if e.fight != nil {
				r.Ended = append(r.Ended, *e.fight)
			}
			delete(t.irqs, n)
		}
	}
	return r
}

// observe looks at q, numairqd's write e, and reports a fight begun.
func (e *irq) observe(q policy.IRQ, now time.Time, reset bool, r *Round) bool {
	f := e.fight
	switch {
	case q.Current.Equal(e.wrote):
		if f != nil && now.Sub(e.at) >= Base {
			r.Ended = append(r.Ended, *f)
			e.fight, e.seen = nil, nil
		}
		return false
	case reset:
		e.fresh = false // the driver's own reset: rewritten, not counted
		if f == nil {
			e.seen = nil
		}
		return false
	case e.fresh:
		e.fresh = false
		e.seen = append(e.seen, now)
		e.seen = e.seen[max(0, len(e.seen)-Overwrites):]
		if f != nil {
			f.Overwrites++
			f.Found = q.Current
			f.Interval = min(2*f.Interval, Cap)
			f.Next = now.Add(f.Interval)
		} else if len(e.seen) == Overwrites && now.Sub(e.seen[0]) <= Window {
			e.fight = &Fight{IRQ: q.Number, Name: q.Name, Want: e.wrote, Found: q.Current, Writer: Writer{Kind: Unknown},
				Since: now, Overwrites: Overwrites, Interval: Base, Next: now.Add(Base)}
			r.Hold[q.Number] = true
			return true
		}
	}
	if f != nil {
		if now.Before(f.Next) {
			r.Hold[q.Number] = true
		} else {
			r.Rewrite = append(r.Rewrite, *f)
		}
	}
	return false
}

// Wrote records res's successful IRQ affinity writes, made at now.
func (t *Tracker) Wrote(res apply.Result, now time.Time) {
	for _, o := range res.Writes {
		if o.Kind != apply.KindOK || o.Write.Kind != policy.WriteIRQAffinity {
			continue
		}
		e := t.irqs[o.IRQ]
		if e == nil || e.name != o.Name {
			if t.irqs == nil {
				t.irqs = map[int]*irq{}
			}
			e = &irq{name: o.Name}
			t.irqs[o.IRQ] = e
		}
		e.wrote, e.at, e.fresh = o.After, now, true
		if e.fight != nil {
			e.fight.Rewrites++
		}
	}
}

// Name sets the writer of the fight of irq, if there is one.
func (t *Tracker) Name(irq int, w Writer) {
	if e := t.irqs[irq]; e != nil && e.fight != nil {
		e.fight.Writer = w
	}
}

// Fights are the fights going on, by IRQ number.
func (t *Tracker) Fights() []Fight {
	var out []Fight
	for _, e := range t.irqs {
		if e.fight != nil {
			out = append(out, *e.fight)
		}
	}
	slices.SortFunc(out, func(a, b Fight) int { return cmp.Compare(a.IRQ, b.IRQ) })
	return out
}

// Due is when a fight next needs a round: a rewrite, or the check that
// a rewrite stayed; zero when there is no fight.
func (t *Tracker) Due() time.Time {
	var due time.Time
	for _, e := range t.irqs {
		if e.fight == nil {
			continue
		}
		at := e.fight.Next
		if e.fresh {
			at = e.at.Add(Base) // whether the rewrite stayed
		}
		if due.IsZero() || at.Before(due) {
			due = at
		}
	}
	return due
}

// The writer kinds, numairqd_irq_fights' writer label.
const (
	Irqbalance = "irqbalance"   // a running irqbalance process
	Tuned      = "tuned"        // a running tuned process (its irq plugin)
	Link       = "systemd_link" // a systemd .link file with IRQAffinityPolicy= (udev applies it)
	Unknown    = "unknown"
)

// Kinds lists the writer kinds, for metrics' series up front.
func Kinds() []string { return []string{Irqbalance, Tuned, Link, Unknown} }

// Writer is the likely other writer of a fight.
type Writer struct {
	Kind string `json:"kind"`
	PID  int    `json:"pid,omitempty"`
	File string `json:"file,omitempty"` // the .link file
}

// String is "irqbalance (pid 12)", "systemd_link (/etc/...)", "unknown".
func (w Writer) String() string {
	switch {
	case w.PID > 0:
		return w.Kind + " (pid " + strconv.Itoa(w.PID) + ")"
	case w.File != "":
		return w.Kind + " (" + w.File + ")"
	}
	return cmp.Or(w.Kind, Unknown)
}
