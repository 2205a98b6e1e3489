package fight

import (
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
)

// sim is one IRQ (27, "eth0-rx-0") numairqd plans on CPU 2, a clock,
// and a Tracker.
type sim struct {
	t       *testing.T
	tr      Tracker
	now     time.Time
	planned cpumask.Mask
	current cpumask.Mask
	writes  int // numairqd's writes
}

func newSim(t *testing.T) *sim {
	s := &sim{t: t, now: time.Unix(1e9, 0), planned: cpumask.New(2), current: cpumask.New(0, 1, 2, 3)}
	s.round(false) // the first write
	return s
}

// round runs one round at s.now: observe, then write what is not held.
func (s *sim) round(reset bool) Round {
	p := &policy.Plan{Devices: []policy.Device{{PCI: "0000:01:00.0", IRQs: []policy.IRQ{
		{Number: 27, Name: "eth0-rx-0", Current: s.current, Planned: s.planned}}}}}
	r := s.tr.Observe(p, s.now, reset)
	if !r.Hold[27] && !s.current.Equal(s.planned) {
		s.current = s.planned
		s.writes++
		w := policy.Write{Kind: policy.WriteIRQAffinity, IRQ: 27, Name: "eth0-rx-0", After: s.planned}
		s.tr.Wrote(apply.Result{Writes: []apply.Outcome{{Write: w, Kind: apply.KindOK}}}, s.now)
	}
	return r
}

// overwrite moves the IRQ to CPU 5, as another writer, then runs a
// round after d.
func (s *sim) overwrite(d time.Duration, reset bool) Round {
	s.current = cpumask.New(5)
	s.now = s.now.Add(d)
	return s.round(reset)
}

func TestThreeOverwritesStartAFight(t *testing.T) {
	s := newSim(t)
	for i := range Overwrites - 1 {
		if r := s.overwrite(2*time.Second, false); len(r.Started) > 0 || r.Hold[27] {
			t.Fatalf("overwrite %d: %+v, want no fight yet", i+1, r)
		}
	}
	r := s.overwrite(2*time.Second, false)
	if len(r.Started) != 1 || !r.Hold[27] {
		t.Fatalf("third overwrite: %+v, want a fight started and the write held", r)
	}
	f := r.Started[0]
	if f.IRQ != 27 || f.Device != "0000:01:00.0" || f.Want.String() != "2" || f.Found.String() != "5" || f.Overwrites != 3 ||
		f.Interval != Base || !f.Next.Equal(s.now.Add(Base)) {
		t.Errorf("fight %+v", f)
	}
	if got := s.tr.Fights(); len(got) != 1 || got[0].IRQ != 27 {
		t.Errorf("Fights() = %+v", got)
	}
	if s.writes != Overwrites {
		t.Errorf("%d writes, want %d: the first and one after each of the first two overwrites", s.writes, Overwrites)
	}
}

func TestOverwritesOutsideTheWindowMakeNoFight(t *testing.T) {
	s := newSim(t)
	for range 2 * Overwrites {
		if r := s.overwrite(Window/2+time.Second, false); len(r.Started) > 0 {
			t.Fatalf("a fight from overwrites %s apart", Window/2+time.Second)
		}
	}
}

// fight starts a fight on s.
func fight(t *testing.T) *sim {
	s := newSim(t)
	for range Overwrites {
		s.overwrite(2*time.Second, false)
	}
	if len(s.tr.Fights()) != 1 {
		t.Fatal("no fight")
	}
	return s
}

func TestBackoffGrowsAndCaps(t *testing.T) {
	s := fight(t)
	var intervals []time.Duration
	for range 8 {
		f := s.tr.Fights()[0]
		if r := s.overwrite(f.Next.Sub(s.now)-time.Second, false); !r.Hold[27] {
			t.Fatalf("round before the backoff's end at %s wrote", f.Next)
		}
		if !s.tr.Due().Equal(f.Next) {
			t.Errorf("Due %s, want the rewrite at %s", s.tr.Due(), f.Next)
		}
		writes := s.writes
		s.now = f.Next
		if r := s.round(false); r.Hold[27] || len(r.Rewrite) != 1 || s.writes != writes+1 {
			t.Fatalf("round at the backoff's end: %+v, %d writes, want one rewrite", r, s.writes-writes)
		}
		intervals = append(intervals, f.Interval)
		s.overwrite(2*time.Second, false) // undone again
	}
	want := []time.Duration{Base, 2 * Base, 4 * Base, 8 * Base, Cap, Cap, Cap, Cap}
	for i := range want {
		if intervals[i] != want[i] {
			t.Fatalf("intervals %v, want %v", intervals, want)
		}
	}
	if f := s.tr.Fights()[0]; f.Rewrites != 8 || f.Overwrites != Overwrites+8 {
		t.Errorf("fight %+v, want 8 rewrites and %d overwrites", f, Overwrites+8)
	}
}

func TestRewriteThatStaysEndsTheFight(t *testing.T) {
	s := fight(t)
	s.now = s.tr.Fights()[0].Next
	s.round(false) // the rewrite; the other writer has stopped
	s.now = s.now.Add(2 * time.Second)
	if r := s.round(false); len(r.Ended) != 0 {
		t.Fatalf("ended %s after the rewrite, want after %s", 2*time.Second, Base)
	}
	if due := s.tr.Due(); !due.Equal(s.now.Add(Base - 2*time.Second)) {
		t.Errorf("Due %s, want the rewrite + Base", due)
	}
	s.now = s.now.Add(Base)
	r := s.round(false)
	if len(r.Ended) != 1 || len(s.tr.Fights()) != 0 || !s.tr.Due().IsZero() {
		t.Fatalf("round %s after the rewrite: %+v, fights %+v", Base, r, s.tr.Fights())
	}
	// The backoff starts over: a fight takes three overwrites again.
	for range Overwrites - 1 {
		if r := s.overwrite(2*time.Second, false); r.Hold[27] {
			t.Fatal("held after the fight ended")
		}
	}
}

func TestDriverResetIsNoOverwrite(t *testing.T) {
	s := newSim(t)
	for range 2 * Overwrites {
		if r := s.overwrite(2*time.Second, true); len(r.Started) > 0 || r.Hold[27] {
			t.Fatalf("a fight from resets (CPU hotplug): %+v", r)
		}
	}
	// Counts before a reset are forgotten.
	s.overwrite(2*time.Second, false)
	s.overwrite(2*time.Second, true)
	s.overwrite(2*time.Second, false)
	if r := s.overwrite(2*time.Second, false); len(r.Started) > 0 {
		t.Fatal("a fight counting an overwrite from before a reset")
	}
}

func TestPlanChangeIsNoOverwrite(t *testing.T) {
	s := newSim(t)
	for i := range 2 * Overwrites {
		s.planned = cpumask.New(i % 4)
		s.now = s.now.Add(2 * time.Second)
		if r := s.round(false); len(r.Started) > 0 || r.Hold[27] {
			t.Fatalf("plan change %d made a fight: %+v", i, r)
		}
	}
	// A plan change ends a fight: the new mask is written at once.
	s = fight(t)
	s.planned = cpumask.New(3)
	if r := s.round(false); len(r.Ended) != 1 || r.Hold[27] || !s.current.Equal(s.planned) {
		t.Fatalf("plan change in a fight: %+v, current %s", r, s.current)
	}
}

func TestGoneIRQIsForgotten(t *testing.T) {
	s := fight(t)
	r := s.tr.Observe(&policy.Plan{}, s.now, false)
	if len(r.Ended) != 1 || len(s.tr.irqs) != 0 {
		t.Fatalf("IRQ gone: %+v, %d remembered", r, len(s.tr.irqs))
	}
}

func TestDryRunMakesNoFight(t *testing.T) {
	var tr Tracker
	p := &policy.Plan{Devices: []policy.Device{{IRQs: []policy.IRQ{{Number: 27, Name: "q", Current: cpumask.New(5), Planned: cpumask.New(2)}}}}}
	w := policy.Write{Kind: policy.WriteIRQAffinity, IRQ: 27, Name: "q", After: cpumask.New(2)}
	now := time.Unix(1e9, 0)
	for i := range 10 {
		now = now.Add(time.Second)
		if r := tr.Observe(p, now, false); len(r.Started) > 0 {
			t.Fatalf("round %d: a fight in a dry run", i)
		}
		tr.Wrote(apply.Result{Writes: []apply.Outcome{{Write: w, Kind: apply.KindDryRun}}}, now)
	}
	if len(tr.irqs) != 0 {
		t.Errorf("%d IRQs remembered from dry-run writes", len(tr.irqs))
	}
}
