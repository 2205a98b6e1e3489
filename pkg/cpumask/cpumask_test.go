package cpumask_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// cpus is shorthand for a sorted CPU list in test tables.
func cpus(c ...int) []int { return c }

// span is {lo, ..., hi}, built without the parser so that parse tests
// can use it for their expected masks.
func span(lo, hi int) cpumask.Mask {
	var b cpumask.Builder
	for c := lo; c <= hi; c++ {
		b.Set(c)
	}
	return b.Mask()
}

// union joins masks, for building test masks from ranges.
func union(ms ...cpumask.Mask) cpumask.Mask {
	var b cpumask.Builder
	for _, m := range ms {
		b.Or(m)
	}
	return b.Mask()
}

// mustPanic fails t unless f panics.
func mustPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", name)
		}
	}()
	f()
}

func TestNewQueries(t *testing.T) {
	tests := []struct {
		name       string
		in         []int
		want       []int
		str        string
		first, lst int
	}{
		{"empty", nil, cpus(), "", -1, -1},
		{"cpu0", cpus(0), cpus(0), "0", 0, 0},
		{"cpu63", cpus(63), cpus(63), "63", 63, 63},
		{"cpu64", cpus(64), cpus(64), "64", 64, 64},
		{"cpu65", cpus(65), cpus(65), "65", 65, 65},
		{"across word 0/1", cpus(65, 63, 64), cpus(63, 64, 65), "63-65", 63, 65},
		{"across word 1/2", cpus(127, 128), cpus(127, 128), "127-128", 127, 128},
		{"cpu8191", cpus(8191), cpus(8191), "8191", 8191, 8191},
		{"ends", cpus(8191, 0), cpus(0, 8191), "0,8191", 0, 8191},
		{"duplicates", cpus(5, 3, 5, 3), cpus(3, 5), "3,5", 3, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := cpumask.New(tt.in...)
			if got := m.CPUs(); !slices.Equal(got, tt.want) {
				t.Errorf("CPUs() = %v, want %v", got, tt.want)
			}
			if got := slices.Collect(m.All()); !slices.Equal(got, tt.want) {
				t.Errorf("All() = %v, want %v", got, tt.want)
			}
			if got := m.Weight(); got != len(tt.want) {
				t.Errorf("Weight() = %d, want %d", got, len(tt.want))
			}
			if got := m.IsEmpty(); got != (len(tt.want) == 0) {
				t.Errorf("IsEmpty() = %v", got)
			}
			if got := m.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
			if got := m.First(); got != tt.first {
				t.Errorf("First() = %d, want %d", got, tt.first)
			}
			if got := m.Last(); got != tt.lst {
				t.Errorf("Last() = %d, want %d", got, tt.lst)
			}
			for _, c := range tt.want {
				if !m.Contains(c) {
					t.Errorf("Contains(%d) = false", c)
				}
			}
		})
	}
}

func TestZeroValue(t *testing.T) {
	var m cpumask.Mask
	if !m.IsEmpty() || m.Weight() != 0 || m.First() != -1 || m.Last() != -1 ||
		m.Next(-1) != -1 || m.String() != "" || len(m.CPUs()) != 0 {
		t.Errorf("zero Mask is not the empty set: %q", m.String())
	}
	if !m.Equal(cpumask.New()) {
		t.Error("zero Mask differs from New()")
	}
}

func TestPanicsOnOutOfRangeIDs(t *testing.T) {
	mustPanic(t, "New(-1)", func() { cpumask.New(-1) })
	mustPanic(t, "New(MaxCPUs)", func() { cpumask.New(cpumask.MaxCPUs) })
	var b cpumask.Builder
	mustPanic(t, "Builder.Set(-1)", func() { b.Set(-1) })
	mustPanic(t, "Builder.Set(math.MaxInt)", func() { b.Set(math.MaxInt) })
}

func TestContains(t *testing.T) {
	m := cpumask.New(0, 63, 64, 127, 128, 8191)
	tests := []struct {
		cpu  int
		want bool
	}{
		{math.MinInt, false}, {-64, false}, {-1, false},
		{0, true}, {1, false}, {62, false}, {63, true}, {64, true}, {65, false},
		{127, true}, {128, true}, {129, false}, {8190, false}, {8191, true},
		{8192, false}, {1 << 40, false}, {math.MaxInt, false},
	}
	for _, tt := range tests {
		if got := m.Contains(tt.cpu); got != tt.want {
			t.Errorf("Contains(%d) = %v, want %v", tt.cpu, got, tt.want)
		}
	}
	if cpumask.New().Contains(0) {
		t.Error("empty mask contains 0")
	}
}

func TestSetOps(t *testing.T) {
	r := span
	n := cpumask.New
	tests := []struct {
		name            string
		a, b            cpumask.Mask
		and, or, andNot cpumask.Mask // andNot is a \ b
		intersects      bool
		aInB, bInA      bool
	}{
		{"both empty", n(), n(), n(), n(), n(), false, true, true},
		{"empty and x", n(), n(3), n(), n(3), n(), false, true, false},
		{"x and empty", n(3, 200), n(), n(), n(3, 200), n(3, 200), false, false, true},
		{"equal", r(0, 3), r(0, 3), r(0, 3), r(0, 3), n(), true, true, true},
		{"63 vs 64", n(63), n(64), n(), n(63, 64), n(63), false, false, false},
		{"64 vs 65", n(64), n(65), n(), n(64, 65), n(64), false, false, false},
		{"127 vs 128", n(127), n(128), n(), n(127, 128), n(127), false, false, false},
		{"disjoint words", n(0), n(128), n(), n(0, 128), n(0), false, false, false},
		{"shorter in longer", n(1), n(1, 200), n(1), n(1, 200), n(), true, true, false},
		{"longer vs shorter", n(1, 200), n(1), n(1), n(1, 200), n(200), true, false, true},
		// The high words cancel: results must be trimmed to compare Equal.
		{"high words cancel", n(1, 300), n(1, 301), n(1), n(1, 300, 301), n(300), true, false, false},
		{"andnot clears top word", n(1, 8191), n(8191), n(8191), n(1, 8191), n(1), true, false, true},
		{"overlap", r(0, 100), r(50, 150), r(50, 100), r(0, 150), r(0, 49), true, false, false},
		{"full and last", r(0, 8191), n(8191), n(8191), r(0, 8191), r(0, 8190), true, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			aStr, bStr := tt.a.String(), tt.b.String()
			check := func(op string, got, want cpumask.Mask) {
				t.Helper()
				if !got.Equal(want) {
					t.Errorf("%s = %q, want %q", op, got, want)
				}
			}
			check("a.And(b)", tt.a.And(tt.b), tt.and)
			check("b.And(a)", tt.b.And(tt.a), tt.and)
			check("a.Or(b)", tt.a.Or(tt.b), tt.or)
			check("b.Or(a)", tt.b.Or(tt.a), tt.or)
			check("a.AndNot(b)", tt.a.AndNot(tt.b), tt.andNot)
			if got := tt.a.Intersects(tt.b); got != tt.intersects {
				t.Errorf("a.Intersects(b) = %v, want %v", got, tt.intersects)
			}
			if got := tt.b.Intersects(tt.a); got != tt.intersects {
				t.Errorf("b.Intersects(a) = %v, want %v", got, tt.intersects)
			}
			if got := tt.a.IsSubsetOf(tt.b); got != tt.aInB {
				t.Errorf("a.IsSubsetOf(b) = %v, want %v", got, tt.aInB)
			}
			if got := tt.b.IsSubsetOf(tt.a); got != tt.bInA {
				t.Errorf("b.IsSubsetOf(a) = %v, want %v", got, tt.bInA)
			}
			if got := tt.a.Equal(tt.b); got != (tt.aInB && tt.bInA) {
				t.Errorf("a.Equal(b) = %v", got)
			}
			if tt.a.String() != aStr || tt.b.String() != bStr {
				t.Errorf("operands changed: a %q -> %q, b %q -> %q", aStr, tt.a, bStr, tt.b)
			}
		})
	}
}

func TestEqualIgnoresHowMaskWasBuilt(t *testing.T) {
	tests := []struct {
		name string
		a, b cpumask.Mask
	}{
		{"andnot to empty", cpumask.New(64).AndNot(cpumask.New(64)), cpumask.Mask{}},
		{"and to empty", cpumask.New(200).And(cpumask.New(201)), cpumask.New()},
		{"or of empties", cpumask.New().Or(cpumask.Mask{}), cpumask.New()},
		{"trimmed range", span(0, 127).AndNot(span(64, 127)), span(0, 63)},
	}
	for _, tt := range tests {
		if !tt.a.Equal(tt.b) || !tt.b.Equal(tt.a) {
			t.Errorf("%s: %q not Equal %q", tt.name, tt.a, tt.b)
		}
	}
	if cpumask.New(1).Equal(cpumask.New(1, 64)) {
		t.Error("masks of different word lengths compare Equal")
	}
}

func TestNext(t *testing.T) {
	m := cpumask.New(0, 63, 64, 65, 127, 128, 8191)
	tests := []struct{ cpu, want int }{
		{math.MinInt, 0}, {-100, 0}, {-1, 0},
		{0, 63}, {62, 63}, {63, 64}, {64, 65}, {65, 127}, {126, 127},
		{127, 128}, {128, 8191}, {8190, 8191},
		{8191, -1}, {8192, -1}, {100000, -1}, {math.MaxInt - 1, -1}, {math.MaxInt, -1},
	}
	for _, tt := range tests {
		if got := m.Next(tt.cpu); got != tt.want {
			t.Errorf("Next(%d) = %d, want %d", tt.cpu, got, tt.want)
		}
	}
	for _, cpu := range []int{math.MinInt, -1, 0, 63, 64, math.MaxInt} {
		if got := cpumask.New().Next(cpu); got != -1 {
			t.Errorf("empty.Next(%d) = %d, want -1", cpu, got)
		}
	}
	if got := cpumask.New(64).Next(63); got != 64 {
		t.Errorf("{64}.Next(63) = %d, want 64", got)
	}
}

func TestAllStopsEarly(t *testing.T) {
	m := cpumask.New(1, 63, 64, 8191)
	var got []int
	for c := range m.All() {
		got = append(got, c)
		if len(got) == 3 {
			break
		}
	}
	if want := cpus(1, 63, 64); !slices.Equal(got, want) {
		t.Errorf("All() with break = %v, want %v", got, want)
	}
}

func TestBuilder(t *testing.T) {
	t.Run("zero value", func(t *testing.T) {
		var b cpumask.Builder
		if !b.Mask().IsEmpty() {
			t.Error("zero Builder is not empty")
		}
	})
	t.Run("set", func(t *testing.T) {
		var b cpumask.Builder
		for _, c := range cpus(0, 63, 64, 127, 128, 8191) {
			b.Set(c)
		}
		b.Set(64) // idempotent
		if got, want := b.Mask().String(), "0,63-64,127-128,8191"; got != want {
			t.Errorf("Mask() = %q, want %q", got, want)
		}
	})
	t.Run("or", func(t *testing.T) {
		var b cpumask.Builder
		b.Set(1)
		b.Or(cpumask.Mask{})
		b.Or(cpumask.New(2, 300))
		b.Or(cpumask.New(64))
		src := cpumask.New(8191)
		b.Or(src)
		b.Set(8190)
		if !src.Equal(cpumask.New(8191)) {
			t.Errorf("Builder.Set changed a mask passed to Or: %q", src)
		}
		if got, want := b.Mask().String(), "1-2,64,300,8190-8191"; got != want {
			t.Errorf("Mask() = %q, want %q", got, want)
		}
	})
	t.Run("mask resets", func(t *testing.T) {
		var b cpumask.Builder
		b.Set(5)
		b.Set(70)
		first := b.Mask()
		if !b.Mask().IsEmpty() {
			t.Fatal("Mask() did not reset the Builder")
		}
		// Reuse must not write through to the mask already returned.
		b.Set(6)
		b.Set(71)
		b.Or(cpumask.New(0))
		second := b.Mask()
		if got := first.String(); got != "5,70" {
			t.Errorf("first mask changed to %q after Builder reuse", got)
		}
		if got := second.String(); got != "0,6,71" {
			t.Errorf("second mask = %q, want \"0,6,71\"", got)
		}
	})
}

// TestConcurrentReads shares one Mask between goroutines; under -race it
// checks that no query or operation writes to its operands.
func TestConcurrentReads(t *testing.T) {
	m := union(span(0, 100), cpumask.New(4095, 8191))
	o := span(50, 5000)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				_ = m.And(o).Or(m).AndNot(o).String()
				_ = m.Hex(8192)
				_ = m.Next(100) + m.Weight() + m.Last()
				_ = m.Intersects(o) && m.IsSubsetOf(o)
				_ = m.CPUs()
			}
		})
	}
	wg.Wait()
}

// model is a map[int]bool reference for Mask.
type model map[int]bool

func (md model) sorted() []int {
	out := make([]int, 0, len(md))
	for c, ok := range md {
		if ok {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// randomMask returns a mask and its model with CPUs below a random limit
// of at most MaxCPUs, at a random density, so that masks of every word
// length and both sparse and dense words occur.
func randomMask(rng *rand.Rand) (cpumask.Mask, model) {
	limits := []int{0, 1, 63, 64, 65, 127, 128, 129, 4096, cpumask.MaxCPUs}
	limit := limits[rng.IntN(len(limits))]
	if rng.IntN(2) == 0 {
		limit = rng.IntN(cpumask.MaxCPUs + 1)
	}
	density := []float64{0, 0.001, 0.01, 0.5, 0.99, 1}[rng.IntN(6)]
	md := model{}
	var b cpumask.Builder
	for c := range limit {
		if rng.Float64() < density {
			md[c] = true
			b.Set(c)
		}
	}
	return b.Mask(), md
}

func TestModelProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	iters := 300
	if testing.Short() {
		iters = 50
	}
	for i := range iters {
		a, ma := randomMask(rng)
		b, mb := randomMask(rng)

		and, or, andNot := model{}, model{}, model{}
		for x := range ma {
			if mb[x] {
				and[x] = true
			} else {
				andNot[x] = true
			}
			or[x] = true
		}
		for x := range mb {
			or[x] = true
		}
		check := func(op string, got cpumask.Mask, want model) {
			t.Helper()
			if g, w := got.CPUs(), want.sorted(); !slices.Equal(g, w) {
				t.Fatalf("iteration %d: %s = %v, model %v", i, op, g, w)
			}
			if got.Weight() != len(want) {
				t.Fatalf("iteration %d: %s.Weight() = %d, model %d", i, op, got.Weight(), len(want))
			}
		}
		check("a", a, ma)
		check("a.And(b)", a.And(b), and)
		check("a.Or(b)", a.Or(b), or)
		check("a.AndNot(b)", a.AndNot(b), andNot)

		if got, want := a.Intersects(b), len(and) > 0; got != want {
			t.Fatalf("iteration %d: Intersects = %v, model %v", i, got, want)
		}
		if got, want := a.IsSubsetOf(b), len(andNot) == 0; got != want {
			t.Fatalf("iteration %d: IsSubsetOf = %v, model %v", i, got, want)
		}
		if got, want := a.Equal(b), slices.Equal(ma.sorted(), mb.sorted()); got != want {
			t.Fatalf("iteration %d: Equal = %v, model %v", i, got, want)
		}

		sa := ma.sorted()
		for range 8 {
			x := rng.IntN(cpumask.MaxCPUs+2) - 1
			if got := a.Contains(x); got != ma[x] {
				t.Fatalf("iteration %d: Contains(%d) = %v, model %v", i, x, got, ma[x])
			}
			want := -1
			if k, _ := slices.BinarySearch(sa, x+1); k < len(sa) {
				want = sa[k]
			}
			if got := a.Next(x); got != want {
				t.Fatalf("iteration %d: Next(%d) = %d, model %d", i, x, got, want)
			}
		}
	}
}
