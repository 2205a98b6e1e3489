package main

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// goBench is one benchmark's runs from `go test -bench -count N
// -benchmem` output.
type goBench struct {
	Pkg, Name            string
	NsOp, BytesOp, Alloc []float64
	// Extra holds the values of the other units a benchmark reports
	// with b.ReportMetric (e.g. "syscalls/op"), by unit.
	Extra map[string][]float64
}

// goBenchRun is what parseGoBench found: the benchmarks in order of
// first appearance, the custom units in order of first appearance, and
// the failures go test reported ("--- FAIL: BenchmarkX" lines and the
// packages of "FAIL\tpkg" lines).
type goBenchRun struct {
	Benches []*goBench
	Units   []string
	Failed  []string
}

// parseGoBench reads go test's benchmark lines ("BenchmarkX-2  123
// 9578729 ns/op  16342944 B/op  93135 allocs/op  41.0 syscalls/op"),
// keyed by the "pkg:" line before them.
func parseGoBench(r io.Reader) goBenchRun {
	var run goBenchRun
	byKey := map[string]*goBench{}
	seenUnit, seenFail := map[string]bool{}, map[string]bool{}
	fail := func(what string) {
		if !seenFail[what] {
			seenFail[what] = true
			run.Failed = append(run.Failed, what)
		}
	}
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "--- FAIL: "); ok && strings.HasPrefix(name, "Benchmark") {
			fail(strings.Fields(name)[0])
			continue
		}
		if p, ok := strings.CutPrefix(line, "FAIL\t"); ok {
			fail("package " + strings.Fields(p)[0])
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		key := pkg + " " + f[0]
		b := byKey[key]
		if b == nil {
			b = &goBench{Pkg: pkg, Name: f[0], Extra: map[string][]float64{}}
			byKey[key] = b
			run.Benches = append(run.Benches, b)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch f[i+1] {
			case "ns/op":
				b.NsOp = append(b.NsOp, v)
			case "B/op":
				b.BytesOp = append(b.BytesOp, v)
			case "allocs/op":
				b.Alloc = append(b.Alloc, v)
			default:
				u := f[i+1]
				b.Extra[u] = append(b.Extra[u], v)
				if !seenUnit[u] {
					seenUnit[u] = true
					run.Units = append(run.Units, u)
				}
			}
		}
	}
	return run
}
