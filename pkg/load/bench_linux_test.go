package load

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/internal/syscount"
)

// Benchmark scale: the scale host's 8192 queue IRQs on 256 CPUs.
const (
	benchIRQs = fakesys.ScaleDevices * fakesys.ScalePerDev
	benchCPUs = fakesys.ScaleCPUs
)

// benchInterrupts is /proc/interrupts of the benchmark host after gen
// sampling periods: IRQ k fires on CPU k%256 (1000 to 1006 interrupts a
// period) and keeps small counts from earlier placements on the others,
// laid out as show_interrupts() prints it.
func benchInterrupts(gen uint64) []byte {
	b := make([]byte, 0, 24<<20)
	b = append(b, "           "...)
	for c := range benchCPUs {
		n := len(b)
		b = append(b, "CPU"...)
		b = strconv.AppendInt(b, int64(c), 10)
		for len(b) < n+11 {
			b = append(b, ' ')
		}
	}
	b = append(b, '\n')
	for k := range benchIRQs {
		irq := fakesys.ScaleFirstIRQ + k
		b = strconv.AppendInt(b, int64(irq), 10)
		b = append(b, ':')
		for c := range benchCPUs {
			v := uint64((irq*31 + c*17) % 1000)
			if c == k%benchCPUs {
				v = 1_000_000 + gen*uint64(1000+k%7)
			}
			var num [20]byte
			s := strconv.AppendUint(num[:0], v, 10)
			b = append(b, "           "[:11-len(s)]...)
			b = append(b, s...)
		}
		bdf := fakesys.ScaleBDF(k / fakesys.ScalePerDev)
		q := strconv.Itoa(k % fakesys.ScalePerDev)
		b = append(b, "  IR-PCI-MSIX-"+bdf+"   "+q+"-edge      mlx5_comp"+q+"@pci:"+bdf+"\n"...)
	}
	for _, name := range []string{"NMI", "LOC", "RES"} {
		b = append(b, name+":"...)
		for range benchCPUs {
			b = append(b, "          7"...)
		}
		b = append(b, "   counter\n"...)
	}
	return b
}

// benchStat is /proc/stat after gen periods of 1000 ticks, of which CPU
// c spends c%50+1 in irq and softirq.
func benchStat(gen uint64) []byte {
	var b []byte
	line := func(name string, irq, soft, idle uint64) {
		b = append(b, name...)
		for _, v := range []uint64{4000, 10, 3000, idle, 20, irq, soft, 0, 0, 0} {
			b = append(b, ' ')
			b = strconv.AppendUint(b, v, 10)
		}
		b = append(b, '\n')
	}
	line("cpu ", 0, 0, 0)
	for c := range uint64(benchCPUs) {
		busy := c%50 + 1
		line("cpu"+strconv.FormatUint(c, 10), 500+gen*busy/2, 900+gen*(busy-busy/2), 100000+gen*(1000-busy))
	}
	b = append(b, "intr 0\nctxt 0\nbtime 1760000000\n"...)
	return b
}

// BenchmarkSample is one sample of the scale host: reading and parsing
// /proc/stat and /proc/interrupts (8192 IRQs x 256 CPUs, about 23 MB)
// and the deltas, shares and averages of every IRQ and CPU.
func BenchmarkSample(b *testing.B) {
	proc := filepath.Join(b.TempDir(), "proc")
	if err := os.MkdirAll(proc, 0o755); err != nil {
		b.Fatal(err)
	}
	write := func(gen uint64) {
		if err := os.WriteFile(filepath.Join(proc, "interrupts"), benchInterrupts(gen), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, "stat"), benchStat(gen), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s := NewSampler(FS{Proc: proc}, Config{HalfLife: halfLife})
	t0 := time.Now()
	write(0)
	if _, err := s.Sample(t0); err != nil {
		b.Fatal(err)
	}
	gen := uint64(0)
	syscount.Measure(b, func(int) {
		gen++
		write(gen)
	}, func() {
		l, err := s.Sample(t0.Add(time.Duration(gen) * 10 * time.Second))
		if err != nil {
			b.Fatal(err)
		}
		if !l.Ready || !l.TimeAccounting || len(l.IRQs) != benchIRQs || len(l.CPUs) != benchCPUs {
			b.Fatalf("sample: ready %v, accounting %v, %d IRQs, %d CPUs", l.Ready, l.TimeAccounting, len(l.IRQs), len(l.CPUs))
		}
		if q := l.IRQs[0]; !q.Ready || q.Rate != 100 || q.Load <= 0 {
			b.Fatalf("IRQ %+v, want rate 100 and a load", q)
		}
	})
}
