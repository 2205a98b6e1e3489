package cpumask_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/malformed"
)

// checkParsed checks the properties every successful parse must have: the
// mask survives a round trip through both formats, and a failed parse
// returns an error that wraps malformed.Err and quotes the input.
func checkParsed(t *testing.T, fn, in string, m cpumask.Mask, err error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, malformed.Err) {
			t.Fatalf("%s(%q) error %v does not wrap ErrMalformed", fn, in, err)
		}
		if !strings.Contains(err.Error(), malformed.Quote(in)) {
			t.Fatalf("%s(%q) error %q does not quote the input", fn, in, err)
		}
		if len(err.Error()) > maxErrLen {
			t.Fatalf("%s(%q) error is %d bytes, want at most %d", fn, in, len(err.Error()), maxErrLen)
		}
		return
	}
	if back, err := cpumask.ParseList(m.String()); err != nil || !back.Equal(m) {
		t.Fatalf("%s(%q) = %q; ParseList(String()) = %q, %v", fn, in, m, back, err)
	}
	for _, nbits := range []int{0, cpumask.MaxCPUs} {
		h := m.Hex(nbits)
		if back, err := cpumask.ParseHex(h); err != nil || !back.Equal(m) {
			t.Fatalf("%s(%q) = %q; ParseHex(Hex(%d) = %q) = %q, %v", fn, in, m, nbits, h, back, err)
		}
	}
	if w, cpus := m.Weight(), m.CPUs(); w != len(cpus) || (w > 0 && (cpus[0] != m.First() || cpus[w-1] != m.Last())) {
		t.Fatalf("%s(%q) = %q: Weight %d, First %d, Last %d disagree with CPUs", fn, in, m, w, m.First(), m.Last())
	}
}

func FuzzParseList(f *testing.F) {
	for _, tt := range validLists {
		f.Add(tt.in)
	}
	for _, in := range badLists {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		m, err := cpumask.ParseList(in)
		checkParsed(t, "ParseList", in, m, err)
	})
}

func FuzzParseHex(f *testing.F) {
	for _, tt := range validHexes {
		f.Add(tt.in)
	}
	for _, in := range badHexes {
		f.Add(in)
	}
	for _, h := range mlx5Hints {
		_, hex, _ := strings.Cut(h.line, ": ")
		f.Add(hex)
	}
	f.Fuzz(func(t *testing.T, in string) {
		m, err := cpumask.ParseHex(in)
		checkParsed(t, "ParseHex", in, m, err)
		if err != nil {
			return
		}
		if back, err := cpumask.ParseList(m.String()); err != nil || !back.Equal(m) {
			t.Fatalf("ParseList(ParseHex(%q).String()) = %q, %v, want %q", in, back, err, m)
		}
	})
}
