package kernfs_test

import (
	"testing"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

func TestFields(t *testing.T) {
	tok, rest := kernfs.NextField([]byte(" \t 24:  0 5\n"))
	if string(tok) != "24:" || string(rest) != "  0 5\n" {
		t.Errorf("NextField = %q, %q", tok, rest)
	}
	if tok, rest := kernfs.NextField([]byte(" \t\r\v\f")); tok != nil || rest != nil {
		t.Errorf("NextField of white space = %q, %q; want nil, nil", tok, rest)
	}
	for in, want := range map[string]bool{"0": true, "0123": true, "": false, "12a": false, "-1": false} {
		if got := kernfs.IsDigits([]byte(in)); got != want {
			t.Errorf("IsDigits(%q) = %v, want %v", in, got, want)
		}
	}
	for _, c := range []struct {
		in string
		n  uint64
		ok bool
	}{{"0", 0, true}, {"4294967296", 1 << 32, true}, {"18446744073709551615", 1<<64 - 1, true},
		{"18446744073709551616", 0, false}, {"000000000000000000001", 0, false}, {"", 0, false}, {"1 ", 0, false}} {
		if n, ok := kernfs.ParseUint([]byte(c.in)); n != c.n || ok != c.ok {
			t.Errorf("ParseUint(%q) = %d, %v; want %d, %v", c.in, n, ok, c.n, c.ok)
		}
	}
}
