package capture_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/capture"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/machine"
)

// BenchmarkScale captures and opens the scale host (8,192 IRQs on 256
// CPUs), reporting the archive's size, entries and unpacked bytes; its
// tree is best under TMPDIR=/dev/shm:
//
//	TMPDIR=/dev/shm go test ./pkg/capture -run '^$' -bench Scale -benchtime 3x
func BenchmarkScale(b *testing.B) {
	tree := fakesys.New(b)
	tree.AddScaleHost()
	file := filepath.Join(b.TempDir(), "scale.tar.gz")
	var m capture.Manifest
	var write, open []time.Duration
	for b.Loop() {
		os.Remove(file)
		start := time.Now()
		f, err := os.Create(file)
		if err != nil {
			b.Fatal(err)
		}
		if m, err = capture.Write(f, capture.Source{Sys: tree.Sys(), Proc: tree.Proc()}); err != nil || f.Close() != nil {
			b.Fatal(err)
		}
		write = append(write, time.Since(start))
		start = time.Now()
		r, err := capture.Open(file)
		if err != nil {
			b.Fatal(err)
		}
		open = append(open, time.Since(start))
		if b.N == 1 || len(open) == 1 {
			mach, err := machine.Read(r.Roots, config.Default())
			if err != nil || len(mach.Inventory.IRQs) < fakesys.ScaleDevices*fakesys.ScalePerDev {
				b.Fatalf("read of the replay: %v", err)
			}
		}
		r.Close()
	}
	fi, err := os.Stat(file)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(fi.Size()), "archive-bytes")
	b.ReportMetric(float64(m.Files+m.Dirs+m.Links), "entries")
	b.ReportMetric(float64(m.Bytes), "unpacked-bytes")
	b.Logf("write %v, open %v, manifest took %.3fs", write, open, m.Took)
}
