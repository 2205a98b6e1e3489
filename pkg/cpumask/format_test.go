package cpumask_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/malformed"
)

// zeroGroups is n comma-terminated zero hex groups: n*32 CPUs of padding.
func zeroGroups(n int) string { return strings.Repeat("00000000,", n) }

type parseCase struct {
	in   string
	want cpumask.Mask
}

// validLists are well-formed list-format inputs; they also seed FuzzParseList.
var validLists = []parseCase{
	{"", cpumask.New()},
	{"\n", cpumask.New()},
	{" \t\n", cpumask.New()},
	{"0", cpumask.New(0)},
	{"0\n", cpumask.New(0)},
	{"0-0", cpumask.New(0)},
	{"5-5\n", cpumask.New(5)},
	{"0-3,8,10-11", union(span(0, 3), cpumask.New(8), span(10, 11))},
	{"0-3,8,10-11\n", union(span(0, 3), cpumask.New(8), span(10, 11))},
	{"  1-2 \n", span(1, 2)},
	{"63", cpumask.New(63)},
	{"64", cpumask.New(64)},
	{"63-65", span(63, 65)},
	{"127,128", cpumask.New(127, 128)},
	{"8191", cpumask.New(8191)},
	{"0-8191", span(0, 8191)},
	{"0-8191\n", span(0, 8191)},
	{"4095-8191", span(4095, 8191)},
	{"3,1-2", span(1, 3)},                      // the kernel accepts any order
	{"0-5,3-8", span(0, 8)},                    // and overlaps
	{"7,7", cpumask.New(7)},                    // and repeats
	{"007", cpumask.New(7)},                    // and leading zeros
	{"0000000000000000000001", cpumask.New(1)}, // longer than int64 digits
	{"112-119,240-247", union(span(112, 119), span(240, 247))},
}

// badLists are malformed list-format inputs; they also seed FuzzParseList.
var badLists = []string{
	"3-1", "8191-0",
	"a", "x\n", "0-3,a", "1-a", "a-1",
	",", ",1", "1,", "1,,2", ",,",
	"1-", "-1", "-", "1-2-3", "1--2", "--1",
	"1, 2", "1 ,2", "1 2", "1- 2", "1 -2", "0-3,\t8",
	"+1", "1.0", "0x10", "1:2", "0-1023:2/256", // the kernel's group syntax is not supported
	"8192", "0-8192", "8192-8193", "0,8192", "10000",
	"99999999999999999999", "0-99999999999999999999", "18446744073709551616",
	"9223372036854775807", "9223372036854775808",
	"١", // a non-ASCII digit
	"\xff", "1\x00",
}

func TestParseList(t *testing.T) {
	for _, tt := range validLists {
		t.Run(strconv.Quote(tt.in), func(t *testing.T) {
			got, err := cpumask.ParseList(tt.in)
			if err != nil {
				t.Fatalf("ParseList(%q): %v", tt.in, err)
			}
			if !got.Equal(tt.want) {
				t.Errorf("ParseList(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// checkSyntaxErr fails t unless err wraps malformed.Err, quotes in
// (cut by malformed.Quote) and is short.
func checkSyntaxErr(t *testing.T, fn, in string, m cpumask.Mask, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s(%q) = %q, want an error", fn, in, m)
	}
	if !errors.Is(err, malformed.Err) {
		t.Errorf("%s(%q) error %v does not wrap ErrMalformed", fn, in, err)
	}
	if !strings.Contains(err.Error(), malformed.Quote(in)) {
		t.Errorf("%s(%q) error %q does not quote the input", fn, in, err)
	}
	if len(err.Error()) > maxErrLen {
		t.Errorf("%s(%.40q...) error is %d bytes, want at most %d", fn, in, len(err.Error()), maxErrLen)
	}
	if !m.IsEmpty() {
		t.Errorf("%s(%q) returned %q with its error, want the empty mask", fn, in, m)
	}
}

// maxErrLen bounds a parse error: the input is quoted once, cut to
// malformed.QuoteLimit, and the bad element and number at most once more
// each, only when they are short.
const maxErrLen = 512

// TestParseLongInputs checks that a multi-megabyte value, as a corrupt
// or hostile file gives, is quoted once, cut, in an error of a few
// hundred bytes.
func TestParseLongInputs(t *testing.T) {
	const big = 5 << 20
	for _, tc := range []struct {
		name, in, want string
	}{
		{"garbage", strings.Repeat("x", big), `: element of 5242880 bytes: not a CPU number`},
		{"digits", strings.Repeat("9", big), `: element of 5242880 bytes: a CPU number of 5242880 digits is beyond the limit of 8192 CPUs`},
		{"range end", "0-" + strings.Repeat("x", big), `: element of 5242882 bytes: not a CPU number`},
		{"after valid elements", strings.Repeat("1,", big/2) + "x", `: element "x": "x" is not a CPU number`},
		{"binary", strings.Repeat("\xff", big), `: element of 5242880 bytes: not a CPU number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, parse := range []struct {
				name string
				f    func(string) (cpumask.Mask, error)
			}{{"ParseList", cpumask.ParseList}, {"ParseHex", cpumask.ParseHex}} {
				m, err := parse.f(tc.in)
				checkSyntaxErr(t, parse.name, tc.in, m, err)
				if err == nil {
					continue
				}
				if n := strings.Count(err.Error(), malformed.Quote(tc.in)[:20]); n != 1 {
					t.Errorf("%s error quotes the value %d times: %s", parse.name, n, err)
				}
				if parse.name == "ParseList" && !strings.HasSuffix(err.Error(), tc.want) {
					t.Errorf("ParseList error = %s, want it to end in %s", err, tc.want)
				}
			}
		})
	}
}

func TestParseListErrors(t *testing.T) {
	for _, in := range badLists {
		t.Run(strconv.Quote(in), func(t *testing.T) {
			m, err := cpumask.ParseList(in)
			checkSyntaxErr(t, "ParseList", in, m, err)
		})
	}
}

func TestParseListErrorMessage(t *testing.T) {
	_, err := cpumask.ParseList("0-3,5-4\n")
	want := `invalid CPU mask list "0-3,5-4\n": reversed range "5-4"`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

// validHexes are well-formed smp_affinity inputs; they also seed FuzzParseHex.
var validHexes = []parseCase{
	{"0", cpumask.New()},
	{"00000000", cpumask.New()},
	{"0,00000000", cpumask.New()},
	{"1", cpumask.New(0)},
	{"1\n", cpumask.New(0)},
	{" 1 \n", cpumask.New(0)},
	{"f", span(0, 3)},
	{"ff", span(0, 7)},
	{"FF", span(0, 7)},
	{"aB", cpumask.New(0, 1, 3, 5, 7)},
	{"ffffffff", span(0, 31)},
	{"00000000,00010000", cpumask.New(16)},
	{"00000000,00010000\n", cpumask.New(16)},
	{"1,00000000", cpumask.New(32)},
	{"8,00000000", cpumask.New(35)},
	{"80000000,00000000", cpumask.New(63)},
	{"1,00000000,00000000", cpumask.New(64)},
	{"3,00000000,00000000", cpumask.New(64, 65)},
	{"80000000,00000001,00000000,00000000", cpumask.New(64, 127)},
	{"1,00000000,00000000,00000000,00000000", cpumask.New(128)},
	{"0,0,0,1", cpumask.New(0)},
	{"1,1", cpumask.New(0, 32)},
	{"ffffffff,ffffffff,ffffffff", span(0, 95)},
	{"80000000," + zeroGroups(254) + "00000000", cpumask.New(8191)},
	{"ffffffff," + zeroGroups(254) + "00000001", union(cpumask.New(0), span(8160, 8191))},
	{"0," + zeroGroups(256) + "1", cpumask.New(0)}, // leading zero groups beyond 8192 bits
}

// badHexes are malformed smp_affinity inputs; they also seed FuzzParseHex.
var badHexes = []string{
	"", "\n", " ",
	"123456789", "000000001", "00000000,000000001", "fffffffff,0",
	"0x10", "0X1", "g", "fg", "-1", "+1", "1_0", "1.0",
	",", ",1", "1,", "1,,2", ",,",
	"1, 2", "1 ,2", "1 2", "ff ff",
	"1," + zeroGroups(255) + "00000000",        // CPU 8192
	"80000000," + zeroGroups(255) + "00000000", // CPU 8223
	"ffffffff," + zeroGroups(300) + "0",
	"١", "\xff", "1\x00",
}

func TestParseHex(t *testing.T) {
	for _, tt := range validHexes {
		t.Run(strconv.Quote(tt.in), func(t *testing.T) {
			got, err := cpumask.ParseHex(tt.in)
			if err != nil {
				t.Fatalf("ParseHex(%q): %v", tt.in, err)
			}
			if !got.Equal(tt.want) {
				t.Errorf("ParseHex(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseHexErrors(t *testing.T) {
	for _, in := range badHexes {
		t.Run(strconv.Quote(in), func(t *testing.T) {
			m, err := cpumask.ParseHex(in)
			checkSyntaxErr(t, "ParseHex", in, m, err)
		})
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		m    cpumask.Mask
		want string
	}{
		{cpumask.New(), ""},
		{cpumask.New(0), "0"},
		{cpumask.New(0, 1), "0-1"},
		{cpumask.New(0, 2), "0,2"},
		{cpumask.New(0, 2, 3), "0,2-3"},
		{union(span(0, 3), cpumask.New(8), span(10, 11)), "0-3,8,10-11"},
		{cpumask.New(63, 64), "63-64"},
		{cpumask.New(63, 65), "63,65"},
		{span(64, 127), "64-127"},
		{cpumask.New(127, 128, 8191), "127-128,8191"},
		{span(0, 8191), "0-8191"},
		{span(0, 8191).AndNot(cpumask.New(4096)), "0-4095,4097-8191"},
	}
	for _, tt := range tests {
		if got := tt.m.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// TestHexKernelFormat checks Hex against what the kernel's bitmap_string
// (%*pb) prints for nr_cpu_ids = nbits.
func TestHexKernelFormat(t *testing.T) {
	tests := []struct {
		name  string
		m     cpumask.Mask
		nbits int
		want  string
	}{
		{"cpu16 of 256", cpumask.New(16), 256,
			"00000000,00000000,00000000,00000000,00000000,00000000,00000000,00010000"},
		{"0-7 of 8", span(0, 7), 8, "ff"},
		{"0-3 of 4", span(0, 3), 4, "f"},
		{"cpu35 of 36", cpumask.New(35), 36, "8,00000000"},
		{"cpu0 of 1", cpumask.New(0), 1, "1"},
		{"cpu0 of 5", cpumask.New(0), 5, "01"},
		{"0-11 of 12", span(0, 11), 12, "fff"},
		{"cpu0 of 32", cpumask.New(0), 32, "00000001"},
		{"cpu0 of 33", cpumask.New(0), 33, "0,00000001"},
		{"cpu31 of 64", cpumask.New(31), 64, "00000000,80000000"},
		{"cpu63 of 64", cpumask.New(63), 64, "80000000,00000000"},
		{"63-64 of 65", cpumask.New(63, 64), 65, "1,80000000,00000000"},
		{"cpu127 of 128", cpumask.New(127), 128, "80000000,00000000,00000000,00000000"},
		{"cpu128 of 129", cpumask.New(128), 129, "1,00000000,00000000,00000000,00000000"},
		{"empty of 0", cpumask.New(), 0, "0"},
		{"empty of -5", cpumask.New(), -5, "0"},
		{"empty of 32", cpumask.New(), 32, "00000000"},
		{"empty of 40", cpumask.New(), 40, "00,00000000"},
		{"nbits raised to hold cpu35", cpumask.New(35), 8, "8,00000000"},
		{"nbits 0 means minimal", cpumask.New(35), 0, "8,00000000"},
		{"cpu8191 of 8192", cpumask.New(8191), 8192, "80000000," + zeroGroups(254) + "00000000"},
		{"cpu0 of 8192", cpumask.New(0), 8192, zeroGroups(255) + "00000001"},
		{"nbits above MaxCPUs is capped", cpumask.New(0), 1 << 40, zeroGroups(255) + "00000001"},
		{"nbits MaxInt is capped", cpumask.New(0), int(^uint(0) >> 1), zeroGroups(255) + "00000001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.m.Hex(tt.nbits)
			if got != tt.want {
				t.Errorf("Hex(%d) = %q, want %q", tt.nbits, got, tt.want)
			}
			back, err := cpumask.ParseHex(got)
			if err != nil || !back.Equal(tt.m) {
				t.Errorf("ParseHex(%q) = %q, %v, want %q", got, back, err, tt.m)
			}
		})
	}
}

// mlx5Hints are /proc/irq/*/affinity_hint lines from the mlx5
// for_each_numa_hop_cpu patch (8/9 of docs/kernel.md §7.1, "After:"), a
// 256-CPU EPYC 7763 whose NIC sits on node 14 (CPUs 112-119,240-247).
var mlx5Hints = []struct {
	line string
	cpu  int
}{
	{"331: 00000000,00000000,00000000,00000000,00010000,00000000,00000000,00000000", 112},
	{"338: 00000000,00000000,00000000,00000000,00800000,00000000,00000000,00000000", 119},
	{"339: 00010000,00000000,00000000,00000000,00000000,00000000,00000000,00000000", 240},
	{"346: 00800000,00000000,00000000,00000000,00000000,00000000,00000000,00000000", 247},
	{"347: 00000000,00000000,00000000,00000000,00000001,00000000,00000000,00000000", 96},
	{"363: 00000000,00000000,00000000,00000000,01000000,00000000,00000000,00000000", 120},
	{"370: 00000000,00000000,00000000,00000000,80000000,00000000,00000000,00000000", 127},
	{"371: 00000001,00000000,00000000,00000000,00000000,00000000,00000000,00000000", 224},
	{"394: 80000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000", 255},
	{"395: 00000000,00000000,00000000,00000000,00000000,00000001,00000000,00000000", 64},
	{"426: 00000000,00000000,00000000,00000000,00000000,80000000,00000000,00000000", 95},
	{"427: 00000000,00000001,00000000,00000000,00000000,00000000,00000000,00000000", 192},
	{"457: 00000000,40000000,00000000,00000000,00000000,00000000,00000000,00000000", 222},
}

func TestHexMLX5AffinityHints(t *testing.T) {
	var local cpumask.Builder
	for i, h := range mlx5Hints {
		_, hex, _ := strings.Cut(h.line, ": ")
		m, err := cpumask.ParseHex(hex + "\n")
		if err != nil {
			t.Fatalf("ParseHex(%q): %v", hex, err)
		}
		if !m.Equal(cpumask.New(h.cpu)) {
			t.Errorf("IRQ %s: ParseHex = %q, want CPU %d", h.line[:3], m, h.cpu)
		}
		if got := m.Hex(256); got != hex {
			t.Errorf("CPU %d: Hex(256) = %q, kernel printed %q", h.cpu, got, hex)
		}
		if i < 4 {
			local.Or(m)
		}
	}
	// The first hints go to the NIC's own node.
	node14, err := cpumask.ParseList("112-119,240-247\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := local.Mask(); !got.IsSubsetOf(node14) || got.Weight() != 4 {
		t.Errorf("first hints %q are not on node 14 %q", got, node14)
	}
	if got, want := node14.Hex(256),
		"00ff0000,00000000,00000000,00000000,00ff0000,00000000,00000000,00000000"; got != want {
		t.Errorf("node14.Hex(256) = %q, want %q", got, want)
	}
}
