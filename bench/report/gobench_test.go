package main

import (
	"fmt"
	"strings"
	"testing"
)

const gobenchOut = `goos: linux
goarch: amd64
pkg: github.com/numairqd/numairqd/pkg/policy
cpu: Intel(R) Xeon(R) Processor
--- FAIL: BenchmarkCompute64Devices8192IRQs4096CPUs
    property_test.go:170: read: /proc/interrupts is larger than 256 MiB
FAIL
exit status 1
FAIL	github.com/numairqd/numairqd/pkg/policy	3.021s
pkg: github.com/numairqd/numairqd/pkg/state
BenchmarkRoundIncremental8192IRQs256CPUs-2   	     100	  2345678 ns/op	        41.00 syscalls/op	  123456 B/op	     789 allocs/op
BenchmarkRoundIncremental8192IRQs256CPUs-2   	     100	  2445678 ns/op	        43.00 syscalls/op	  123456 B/op	     790 allocs/op
BenchmarkRoundFull8192IRQs256CPUs-2          	      10	 12345678 ns/op	     16390 syscalls/op	 9876543 B/op	   54321 allocs/op
pkg: github.com/numairqd/numairqd/pkg/topology
BenchmarkRebuild1024CPUs32Nodes-2   	      84	  12620000 ns/op	 2864000 B/op	   17864 allocs/op
ok  	github.com/numairqd/numairqd/pkg/topology	4.1s
`

func TestParseGoBench(t *testing.T) {
	run := parseGoBench(strings.NewReader(gobenchOut))
	if got := fmt.Sprint(run.Failed); got != "[BenchmarkCompute64Devices8192IRQs4096CPUs package github.com/numairqd/numairqd/pkg/policy]" {
		t.Errorf("Failed = %s", got)
	}
	if fmt.Sprint(run.Units) != "[syscalls/op]" {
		t.Errorf("Units = %v", run.Units)
	}
	if len(run.Benches) != 3 {
		t.Fatalf("%d benchmarks: %+v", len(run.Benches), run.Benches)
	}
	inc := run.Benches[0]
	if inc.Pkg != "github.com/numairqd/numairqd/pkg/state" || fmt.Sprint(inc.Extra["syscalls/op"]) != "[41 43]" ||
		fmt.Sprint(inc.NsOp) != "[2.345678e+06 2.445678e+06]" || fmt.Sprint(inc.Alloc) != "[789 790]" {
		t.Errorf("incremental = %+v", inc)
	}
	if rb := run.Benches[2]; rb.Name != "BenchmarkRebuild1024CPUs32Nodes-2" || len(rb.Extra["syscalls/op"]) != 0 || len(rb.BytesOp) != 1 {
		t.Errorf("rebuild = %+v", rb)
	}
}

func TestGoBenchSection(t *testing.T) {
	for _, tt := range []struct {
		name, out, base, how string
	}{
		{"one run", gobenchOut, "", "`go test -run '^$' -bench ... -count 2 -benchmem` on the host"},
		// Interleaved with a baseline: one -count 1 run per round,
		// the same failure in each.
		{"interleaved", gobenchOut + gobenchOut, "abc1234", "4 rounds of `-count 1 -benchmem`, each running the test binaries built at abc1234 and those of the working tree"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := &writer{}
			w.goBench([]byte(tt.out), nil, tt.base)
			out := w.body.String()
			for _, want := range []string{
				tt.how,
				"| package | benchmark | time/op | B/op | allocs/op | syscalls/op |",
				"| pkg/state | BenchmarkRoundIncremental8192IRQs256CPUs-2 | 2.40 ms (2.35 ms–2.45 ms) | 120.6 KiB (120.6 KiB–120.6 KiB) | 790 (789–790) | 42 (41–43) |",
				"| pkg/topology | BenchmarkRebuild1024CPUs32Nodes-2 | 12.62 ms (12.62 ms–12.62 ms) | 2.7 MiB (2.7 MiB–2.7 MiB) | 17864 (17864–17864) | – |",
				"**go test reported failures:** BenchmarkCompute64Devices8192IRQs4096CPUs, package github.com/numairqd/numairqd/pkg/policy. ",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("section lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
