package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// loadTree writes the proc and sys files `sample` reads: two CPUs, one
// virtio queue IRQ and one that is not a queue.
func loadTree(t *testing.T) guestinfo.FS {
	t.Helper()
	root := t.TempDir()
	for p, s := range map[string]string{
		"proc/uptime": "12.50 20.00\n",
		"proc/interrupts": "           CPU0       CPU1       \n" +
			" 29:          0          1   PCI-MSI 34078720-edge      virtio0-config\n" +
			" 30:          5        700   PCI-MSI 34078721-edge      virtio0-input.0\n" +
			"LOC:        100        100   Local timer interrupts\n",
		"proc/stat":                                      "cpu  2 0 2 20 0 0 4 0 0 0\ncpu0 1 0 1 10 0 0 1 0 0 0\ncpu1 1 0 1 10 0 0 3 0 0 0\nintr 0\n",
		"proc/softirqs":                                  "                    CPU0       CPU1       \n      NET_RX:          3        690\n",
		"proc/irq/30/smp_affinity_list":                  "1\n",
		"proc/irq/30/effective_affinity_list":            "1\n",
		"sys/class/net/eth0/statistics/rx_packets":       "700\n",
		"sys/class/net/eth0/statistics/rx_dropped":       "0\n",
		"sys/class/net/eth0/statistics/rx_missed_errors": "0\n",
		"sys/class/net/eth0/statistics/rx_fifo_errors":   "0\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return guestinfo.FS{Root: root}
}

func TestSample(t *testing.T) {
	var out bytes.Buffer
	start := time.Now()
	if err := sample(loadTree(t), []string{"-interval", "20ms", "-count", "3"}, &out); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Errorf("3 samples 20 ms apart took %v", d)
	}
	ss, err := guestinfo.ParseLoadSamples(&out)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 3 {
		t.Fatalf("%d samples, want 3", len(ss))
	}
	s := ss[0]
	if s.Errors != nil || s.UptimeS != 12.5 || !slices.Equal(s.IRQCPUs, []int{0, 1}) || len(s.IRQs) != 1 ||
		s.IRQs[0].Number != 30 || !slices.Equal(s.IRQs[0].Counts, []uint64{5, 700}) || s.IRQs[0].Effective != "1" ||
		len(s.CPUs) != 2 || s.CPUs[1].NetRX != 690 || s.Net == nil || s.Net.RxPackets != 700 {
		t.Errorf("sample %+v", s)
	}

	out.Reset()
	if err := sample(loadTree(t), []string{"-count", "1", "-irqs", "config$", "-iface", ""}, &out); err != nil {
		t.Fatal(err)
	}
	if ss, err := guestinfo.ParseLoadSamples(&out); err != nil || len(ss) != 1 || ss[0].Net != nil ||
		len(ss[0].IRQs) != 1 || ss[0].IRQs[0].Number != 29 {
		t.Errorf("-irqs config$ -iface '': %+v, %v", ss, err)
	}
}

func TestSampleFlags(t *testing.T) {
	for args, want := range map[string]string{
		"-interval 5ms":  "-interval 5ms: want 10ms..1h0m0s",
		"-interval 2h":   "-interval 2h0m0s",
		"-count 0":       "-count 0: want 1..100000",
		"-irqs (":        "-irqs: error parsing regexp",
		"-count 1 extra": `sample: unexpected argument "extra"`,
	} {
		err := sample(guestinfo.FS{Root: t.TempDir()}, strings.Fields(args), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}
