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
}

// parseGoBench reads go test's benchmark lines ("BenchmarkX-2  123
// 9578729 ns/op  16342944 B/op  93135 allocs/op"), keyed by the "pkg:"
// line before them, in order of first appearance.
func parseGoBench(r io.Reader) []*goBench {
	var out []*goBench
	byKey := map[string]*goBench{}
	pkg := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		key := pkg + " " + f[0]
		b := byKey[key]
		if b == nil {
			b = &goBench{Pkg: pkg, Name: f[0]}
			byKey[key] = b
			out = append(out, b)
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
			}
		}
	}
	return out
}
