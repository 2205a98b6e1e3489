package cpumask_test

import (
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// benchMasks are 4096-CPU masks: one dense run, SMT-style node blocks
// (64 CPUs per node, siblings 2048 apart), and every other CPU, the worst
// case for the list format.
func benchMasks() []struct {
	name string
	m    cpumask.Mask
} {
	var nodes, alternate cpumask.Builder
	for n := 0; n < 32; n += 2 {
		nodes.Or(span(n*64, n*64+63))
		nodes.Or(span(2048+n*64, 2048+n*64+63))
	}
	for c := 0; c < 4096; c += 2 {
		alternate.Set(c)
	}
	return []struct {
		name string
		m    cpumask.Mask
	}{
		{"dense", span(0, 4095)},
		{"nodes", nodes.Mask()},
		{"alternate", alternate.Mask()},
	}
}

func BenchmarkParseList(b *testing.B) {
	for _, bm := range benchMasks() {
		s := bm.m.String()
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				if _, err := cpumask.ParseList(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseHex(b *testing.B) {
	for _, bm := range benchMasks() {
		s := bm.m.Hex(4096)
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				if _, err := cpumask.ParseHex(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkString(b *testing.B) {
	for _, bm := range benchMasks() {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = bm.m.String()
			}
		})
	}
}

func BenchmarkHex(b *testing.B) {
	for _, bm := range benchMasks() {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = bm.m.Hex(4096)
			}
		})
	}
}
