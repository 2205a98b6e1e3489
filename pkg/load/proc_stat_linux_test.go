package load

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// ticks is one CPU's /proc/stat line in a fixture: the CPU's whole time
// is idle+irq+soft, the other columns stay 0 (user is 3 so that a
// column before irq holds something).
type ticks struct {
	cpu             int
	idle, irq, soft uint64
}

// writeStat writes proc/stat as show_stat() lays it out: the sum line,
// a line per online CPU, then the lines the parser must not reach.
func writeStat(tr *fakesys.Tree, cpus ...ticks) {
	var sb strings.Builder
	var idle, irq, soft uint64
	for _, c := range cpus {
		idle, irq, soft = idle+c.idle, irq+c.irq, soft+c.soft
	}
	fmt.Fprintf(&sb, "cpu  %d 0 0 %d 0 %d %d 0 0 0\n", 3*len(cpus), idle, irq, soft)
	for _, c := range cpus {
		fmt.Fprintf(&sb, "cpu%d 3 0 0 %d 0 %d %d 0 0 0\n", c.cpu, c.idle, c.irq, c.soft)
	}
	sb.WriteString("intr 1234 0 9 0 0 77\nctxt 5551\nbtime 1760000000\nprocesses 412\n" +
		"procs_running 1\nprocs_blocked 0\nsoftirq 90 0 30 0 20 40 0 0 0 0 0\n")
	tr.WriteFile("proc/stat", sb.String())
}

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []CPUStat
	}{
		{
			name: "ten fields, CPU 1 offline, the rest of the file not read",
			in: "cpu  20 1 30 1000 4 7 11 2 0 0\n" +
				"cpu0 10 1 10 500 4 2 5 1 6 0\n" +
				"cpu2 10 0 20 500 0 5 6 1 0 0\n" +
				"intr 99 not even numbers here\n" +
				"cpu3 x\n",
			want: []CPUStat{
				{CPU: 0, IRQ: 2, SoftIRQ: 5, Total: 10 + 1 + 10 + 500 + 4 + 2 + 5 + 1},
				{CPU: 2, IRQ: 5, SoftIRQ: 6, Total: 10 + 20 + 500 + 5 + 6 + 1},
			},
		},
		{
			name: "eight fields (before 2.6.24), tabs, no final newline",
			in:   "cpu 1 1 1 1 1 1 1 1\ncpu7\t1 2 3 4 5 6 7 8",
			want: []CPUStat{{CPU: 7, IRQ: 6, SoftIRQ: 7, Total: 36}},
		},
		{
			name: "fields past steal are counts too, not in the total",
			in:   "cpu5 1 0 0 1 0 1 1 0 7 7 99\n",
			want: []CPUStat{{CPU: 5, IRQ: 1, SoftIRQ: 1, Total: 4}},
		},
		{
			name: "lines before the cpu lines are skipped, a blank line ends them",
			in:   "\nsomething 1\ncpu0 0 0 0 0 0 0 0 0 0 0\n\ncpu1 1 1 1 1 1 1 1 1 1 1\n",
			want: []CPUStat{{CPU: 0}},
		},
		{
			name: "the largest CPU and the largest count",
			in:   "cpu8191 0 0 0 0 0 18446744073709551615 0 0 0 0\n",
			want: []CPUStat{{CPU: 8191, IRQ: 1<<64 - 1, Total: 1<<64 - 1}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStat(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestParseStatMalformed checks that every line show_stat() never
// prints is an error that names its line, quotes it and wraps
// kernfs.ErrMalformed.
func TestParseStatMalformed(t *testing.T) {
	const agg = "cpu  1 1 1 1 1 1 1 1 0 0\n"
	long := "cpu0 1 2 3 4 5 6 7 y" + strings.Repeat(" 1", 1000)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"truncated line", agg + "cpu0 1 2 3 4 5 6 7 8 0 0\ncpu1 12 0 4",
			`line 3 "cpu1 12 0 4": 3 counts, want at least 8 (user nice system idle iowait irq softirq steal): malformed`},
		{"line cut inside a count", agg + "cpu0 1 2 3 4 5 6 7 8 9 0\ncpu1 1 2 3 4 5 6 7 1x",
			`line 3 "cpu1 1 2 3 4 5 6 7 1x": field 8 "1x" is not a count: malformed`},
		{"non-numeric field", agg + "cpu0 10 0 20 abc 0 1 1 0 0 0\n",
			`line 2 "cpu0 10 0 20 abc 0 1 1 0 0 0": field 4 "abc" is not a count`},
		{"negative field", agg + "cpu0 10 0 20 1 0 -1 1 0 0 0\n", `field 6 "-1" is not a count`},
		{"count past 2^64", agg + "cpu0 0 0 0 0 0 18446744073709551616 0 0\n", `field 6 "18446744073709551616" is not a count`},
		{"counts that add up past 2^64", agg + "cpu0 18446744073709551615 1 0 0 0 0 0 0\n", "counts add up past 2^64 ticks"},
		{"no fields", agg + "cpu3\n", `line 2 "cpu3": 0 counts, want at least 8`},
		{"missing fields", agg + "cpu3 1 2 3 4 5 6 7\n", `line 2 "cpu3 1 2 3 4 5 6 7": 7 counts, want at least 8`},
		{"not cpuN", agg + "cpuX 1 2 3 4 5 6 7 8\n", `line 2 "cpuX 1 2 3 4 5 6 7 8": "cpuX" is not cpuN`},
		{"CPU with a sign", agg + "cpu+1 1 2 3 4 5 6 7 8\n", `"cpu+1" is not cpuN`},
		{"CPU past the limit", agg + "cpu8192 1 2 3 4 5 6 7 8\n", "CPU 8192 is beyond the limit of 8192 CPUs"},
		{"CPU id too long", agg + "cpu000000001 1 2 3 4 5 6 7 8\n", `"cpu000000001" is not cpuN`},
		{"CPU twice", agg + "cpu1 1 2 3 4 5 6 7 8\ncpu1 1 2 3 4 5 6 7 8\n", `line 3 "cpu1 1 2 3 4 5 6 7 8": CPU 1 listed twice`},
		{"no cpu lines", "intr 0\nctxt 1\n", "no cpuN lines: malformed"},
		{"empty", "", "no cpuN lines: malformed"},
		{"only the sum line", agg, "no cpuN lines: malformed"},
		{"line past the line limit", agg + "cpu0 " + strings.Repeat("1 ", maxStatLine) + "\n",
			"line 2: longer than the limit of 4096 bytes: malformed"},
		{"quote of a long line is cut", agg + long + "\n",
			"line 2 " + kernfs.Quote(long) + `: field 8 "y" is not a count`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStat(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("no error; got %+v", got)
			}
			if !errors.Is(err, kernfs.ErrMalformed) {
				t.Errorf("error %q does not wrap kernfs.ErrMalformed", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tc.want)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error of %d bytes, want a short one", len(err.Error()))
			}
		})
	}
	// The cut quote says how long the line was.
	if q := kernfs.Quote(long); !strings.HasSuffix(q, `"... (2020 bytes)`) {
		t.Errorf("Quote = %s, want a cut quote of the 2020-byte line", q)
	}
}

// TestReadStatBadFiles checks that the file is named, that a huge file
// or a FIFO is refused without reading it all or blocking, and that a
// missing file stays fs.ErrNotExist.
func TestReadStatBadFiles(t *testing.T) {
	fifo := func(t *testing.T, tr *fakesys.Tree) {
		if err := syscall.Mkfifo(tr.Path("proc/stat"), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	write := func(s string) func(*testing.T, *fakesys.Tree) {
		return func(_ *testing.T, tr *fakesys.Tree) { tr.WriteFile("proc/stat", s) }
	}
	for _, tc := range []struct {
		name    string
		make    func(*testing.T, *fakesys.Tree)
		want    string
		is      error
		lowered int64 // maxStatSize for the case; 0 keeps it
	}{
		{"FIFO", fifo, "proc/stat: malformed: not a regular file (a named pipe)", kernfs.ErrMalformed, 0},
		{"missing", func(*testing.T, *fakesys.Tree) {}, "proc/stat: no such file or directory", fs.ErrNotExist, 0},
		{"directory", func(_ *testing.T, tr *fakesys.Tree) { tr.Mkdir("proc/stat") }, "proc/stat: is a directory", syscall.EISDIR, 0},
		{"5 MB before any cpu line", write(strings.Repeat("x\n", 5<<19)),
			"proc/stat: malformed: longer than the limit of 4194304 bytes", kernfs.ErrMalformed, 0},
		{"more cpu lines than the size limit", write(cpuLines(100)),
			"proc/stat: malformed: longer than the limit of 1024 bytes", kernfs.ErrMalformed, 1 << 10},
		{"malformed line", write("cpu  1 1 1 1 1 1 1 1\ncpu0 1 1 1\n"),
			`proc/stat: line 2 "cpu0 1 1 1": 3 counts`, kernfs.ErrMalformed, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.lowered != 0 {
				old := maxStatSize
				maxStatSize = tc.lowered
				t.Cleanup(func() { maxStatSize = old })
			}
			tr := fakesys.New(t)
			tc.make(t, tr)
			var err error
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, err = FS{Proc: tr.Proc()}.ReadStat()
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("ReadStat blocked")
			}
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "read "+tr.Proc()) {
				t.Errorf("error %q\nwant it to name the file and contain %q", err, tc.want)
			}
			if len(err.Error()) > 512 {
				t.Errorf("error of %d bytes, want a short one", len(err.Error()))
			}
		})
	}
}

// cpuLines is n valid cpuN lines, about 30 bytes each.
func cpuLines(n int) string {
	var sb strings.Builder
	for i := range n {
		sb.WriteString("cpu" + strconv.Itoa(i) + " 1 0 2 300 0 4 5 0 0 0\n")
	}
	return sb.String()
}

func TestReadStat(t *testing.T) {
	tr := fakesys.New(t)
	writeStat(tr, ticks{cpu: 0, idle: 100, irq: 2, soft: 3}, ticks{cpu: 3, idle: 50, irq: 0, soft: 1})
	got, err := FS{Proc: tr.Proc()}.ReadStat()
	if err != nil {
		t.Fatal(err)
	}
	want := []CPUStat{{CPU: 0, IRQ: 2, SoftIRQ: 3, Total: 108}, {CPU: 3, IRQ: 0, SoftIRQ: 1, Total: 54}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add("cpu  20 1 30 1000 4 7 11 2 0 0\ncpu0 10 1 10 500 4 2 5 1 6 0\ncpu2 10 0 20 500 0 5 6 1 0 0\nintr 9\n")
	f.Add("cpu7\t1 2 3 4 5 6 7 8")
	f.Add("cpu8191 0 0 0 0 0 18446744073709551615 0 0 0 0\n")
	f.Add("cpu1 1\ncpu1 1 2 3 4 5 6 7 8\n")
	f.Add("\n\ncpu 1\ncpux\n")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseStat(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, kernfs.ErrMalformed) {
				t.Fatalf("error %q does not wrap kernfs.ErrMalformed", err)
			}
			return
		}
		seen := map[int]bool{}
		for _, c := range got {
			if seen[c.CPU] || c.CPU < 0 || c.CPU >= 8192 {
				t.Fatalf("CPU %d repeated or out of range", c.CPU)
			}
			seen[c.CPU] = true
			if c.IRQ > c.Total || c.SoftIRQ > c.Total-c.IRQ {
				t.Fatalf("CPU %d: irq %d + softirq %d past the total %d", c.CPU, c.IRQ, c.SoftIRQ, c.Total)
			}
		}
	})
}
