package guestinfo

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// Fixtures in the format of Debian's 6.1 kernel on x86 (chip PCI-MSI
// with the encoded hwirq; show_interrupts and show_softirqs widths).
// The 8-CPU pair is ten seconds apart; in the second, CPU 5 is offline,
// so /proc/interrupts and /proc/stat lack it and /proc/softirqs (one
// column per possible CPU) keeps it.
var (
	interrupts4 = `           CPU0       CPU1       CPU2       CPU3       
  0:         38          0          0          0   IO-APIC   2-edge      timer
  1:          9          0          0          0   IO-APIC   1-edge      i8042
  4:        412          0          0          0   IO-APIC   4-edge      ttyS0
  9:          0          0          0          0   IO-APIC   9-fasteoi   acpi
 24:          0         31          0          0   PCI-MSI 17301504-edge      nvme0q0
 25:          3          0          0          0   PCI-MSI 17301505-edge      nvme0q1
 26:          0          0          3          0   PCI-MSI 17301506-edge      nvme0q2
 27:          0          0          0          0   PCI-MSI 17301507-edge      nvme0q3
 28:          0          0          0          0   PCI-MSI 17301508-edge      nvme0q4
 29:          0          0          0          0   PCI-MSI 34078720-edge      virtio0-config
 30:          5          0          0          0   PCI-MSI 34078721-edge      virtio0-input.0
 31:          1          0          0          0   PCI-MSI 34078722-edge      virtio0-output.0
 32:          0          5          0          0   PCI-MSI 34078723-edge      virtio0-input.1
 33:          0          1          0          0   PCI-MSI 34078724-edge      virtio0-output.1
 34:          0          0          5          0   PCI-MSI 34078725-edge      virtio0-input.2
 35:          0          0          1          0   PCI-MSI 34078726-edge      virtio0-output.2
 36:          0          0          0          5   PCI-MSI 34078727-edge      virtio0-input.3
 37:          0          0          0          1   PCI-MSI 34078728-edge      virtio0-output.3
NMI:          0          0          0          0   Non-maskable interrupts
LOC:      12345      11234      10987      10456   Local timer interrupts
SPU:          0          0          0          0   Spurious interrupts
RES:        123        145          0          0   Rescheduling interrupts
CAL:       1200       1300          0          0   Function call interrupts
TLB:         10          0          0          0   TLB shootdowns
MCP:          2          2          2          2   Machine check polls
ERR:          0
MIS:          0
`
	softirqs4 = `                    CPU0       CPU1       CPU2       CPU3       
          HI:          0          0          0          1
       TIMER:       1180        950          0          0
      NET_TX:          2          0          0          0
      NET_RX:        950        812        799        770
       BLOCK:         95         22          0          0
    IRQ_POLL:          0          0          0          0
     TASKLET:          5          0          0          0
       SCHED:       1800       1500          0          0
     HRTIMER:          0          0          0          0
         RCU:       1300       1250          0          0
`
	stat4 = `cpu  1573 0 2895 95133 27 0 412 0 0 0
cpu0 401 0 738 23745 7 0 120 0 0 0
cpu1 390 0 712 23801 6 0 98 0 0 0
cpu2 395 0 720 23790 7 0 97 0 0 0
cpu3 387 0 725 23797 7 0 97 0 0 0
intr 45210 38 9 0 0 412 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 31 3 3 0 0 1 1005
ctxt 98765
btime 1764625000
processes 210
procs_running 1
procs_blocked 0
softirq 23456 1 2130 2 3331 117 0 5 3300 0 2550
`
	interrupts8 = `           CPU0       CPU1       CPU2       CPU3       CPU4       CPU5       CPU6       CPU7       
  0:         38          0          0          0          0          0          0          0   IO-APIC   2-edge      timer
  1:          9          0          0          0          0          0          0          0   IO-APIC   1-edge      i8042
  4:        412          0          0          0          0          0          0          0   IO-APIC   4-edge      ttyS0
  9:          0          0          0          0          0          0          0          0   IO-APIC   9-fasteoi   acpi
 24:          0         31          0          0          0          0          0          0   PCI-MSI 17301504-edge      nvme0q0
 25:          3          0          0          0          0          0          0          0   PCI-MSI 17301505-edge      nvme0q1
 26:          0          0          3          0          0          0          0          0   PCI-MSI 17301506-edge      nvme0q2
 27:          0          0          0          0          3          0          0          0   PCI-MSI 17301507-edge      nvme0q3
 28:          0          0          0          0          0          0          3          0   PCI-MSI 17301508-edge      nvme0q4
 29:          0          0          0          0          1          0          0          0   PCI-MSI 34078720-edge      virtio0-config
 30:          5          0          0          0       1000          0          0          0   PCI-MSI 34078721-edge      virtio0-input.0
 31:          1          0          0          0          0          0          0          0   PCI-MSI 34078722-edge      virtio0-output.0
 32:          0          5          0          0          0          0          0          0   PCI-MSI 34078723-edge      virtio0-input.1
 33:          0          1          0          0          0          0          0          0   PCI-MSI 34078724-edge      virtio0-output.1
 34:          0          0          5          0          0          0          0          0   PCI-MSI 34078725-edge      virtio0-input.2
 35:          0          0          1          0          0          0          0          0   PCI-MSI 34078726-edge      virtio0-output.2
 36:          0          0          0          5          0          0          0          0   PCI-MSI 34078727-edge      virtio0-input.3
 37:          0          0          0          1          0          0          0          0   PCI-MSI 34078728-edge      virtio0-output.3
NMI:          0          0          0          0          0          0          0          0   Non-maskable interrupts
LOC:      12345      11234      10987      10456       9000       8000       7000       6000   Local timer interrupts
SPU:          0          0          0          0          0          0          0          0   Spurious interrupts
RES:        123        145          0          0          0          0          0          0   Rescheduling interrupts
CAL:       1200       1300          0          0          0          0          0          0   Function call interrupts
TLB:         10          0          0          0          0          0          0          0   TLB shootdowns
MCP:          2          2          2          2          0          0          0          0   Machine check polls
ERR:          0
MIS:          0
`
	softirqs8 = `                    CPU0       CPU1       CPU2       CPU3       CPU4       CPU5       CPU6       CPU7       
          HI:          0          0          0          1          0          0          0          0
       TIMER:       1180        950          0          0          0          0          0          0
      NET_TX:          2          0          0          0          0          0          0          0
      NET_RX:         10         11         12         13       1000         20         30         40
       BLOCK:         95         22          0          0          0          0          0          0
    IRQ_POLL:          0          0          0          0          0          0          0          0
     TASKLET:          5          0          0          0          0          0          0          0
       SCHED:       1800       1500          0          0          0          0          0          0
     HRTIMER:          0          0          0          0          0          0          0          0
         RCU:       1300       1250          0          0          0          0          0          0
`
	stat8 = `cpu  828 0 1600 80000 56 0 400 0 0 0
cpu0 100 0 200 10000 7 0 50 0 0 0
cpu1 101 0 200 10000 7 0 50 0 0 0
cpu2 102 0 200 10000 7 0 50 0 0 0
cpu3 103 0 200 10000 7 0 50 0 0 0
cpu4 104 0 200 10000 7 0 50 0 0 0
cpu5 105 0 200 10000 7 0 50 0 0 0
cpu6 106 0 200 10000 7 0 50 0 0 0
cpu7 107 0 200 10000 7 0 50 0 0 0
intr 45210 38 9 0 0 412 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 31 3 3 0 0 1 1005
ctxt 98765
btime 1764625000
processes 210
procs_running 1
procs_blocked 0
softirq 23456 1 2130 2 3331 117 0 5 3300 0 2550
`
	interrupts8Offline = `           CPU0       CPU1       CPU2       CPU3       CPU4       CPU6       CPU7       
  0:         38          0          0          0          0          0          0   IO-APIC   2-edge      timer
  1:          9          0          0          0          0          0          0   IO-APIC   1-edge      i8042
  4:        530          0          0          0          0          0          0   IO-APIC   4-edge      ttyS0
  9:          0          0          0          0          0          0          0   IO-APIC   9-fasteoi   acpi
 24:          0         31          0          0          0          0          0   PCI-MSI 17301504-edge      nvme0q0
 25:          3          0          0          0          0          0          0   PCI-MSI 17301505-edge      nvme0q1
 26:          0          0          3          0          0          0          0   PCI-MSI 17301506-edge      nvme0q2
 27:          0          0          0          0          3          0          0   PCI-MSI 17301507-edge      nvme0q3
 28:          0          0          0          0          0          3          0   PCI-MSI 17301508-edge      nvme0q4
 29:          0          0          0          0          1          0          0   PCI-MSI 34078720-edge      virtio0-config
 30:          5          0          0          0      10000        900          0   PCI-MSI 34078721-edge      virtio0-input.0
 31:          1          0          0          0          0          0          0   PCI-MSI 34078722-edge      virtio0-output.0
 32:          0          5          0          0          0          0          0   PCI-MSI 34078723-edge      virtio0-input.1
 33:          0          1          0          0          0          0          0   PCI-MSI 34078724-edge      virtio0-output.1
 34:          0          0          5          0          0          0          0   PCI-MSI 34078725-edge      virtio0-input.2
 35:          0          0          1          0          0          0          0   PCI-MSI 34078726-edge      virtio0-output.2
 36:          0          0          0          5          0          0          0   PCI-MSI 34078727-edge      virtio0-input.3
 37:          0          0          0          1          0          0          0   PCI-MSI 34078728-edge      virtio0-output.3
NMI:          0          0          0          0          0          0          0   Non-maskable interrupts
LOC:      12345      11234      10987      10456       9000       7000       6000   Local timer interrupts
SPU:          0          0          0          0          0          0          0   Spurious interrupts
RES:        123        145          0          0          0          0          0   Rescheduling interrupts
CAL:       1200       1300          0          0          0          0          0   Function call interrupts
TLB:         10          0          0          0          0          0          0   TLB shootdowns
MCP:          2          2          2          2          0          0          0   Machine check polls
ERR:          0
MIS:          0
`
	softirqs8Offline = `                    CPU0       CPU1       CPU2       CPU3       CPU4       CPU5       CPU6       CPU7       
          HI:          0          0          0          1          0          0          0          0
       TIMER:       1180        950          0          0          0          0          0          0
      NET_TX:          2          0          0          0          0          0          0          0
      NET_RX:         10         11         12         13      10000         20        930         40
       BLOCK:         95         22          0          0          0          0          0          0
    IRQ_POLL:          0          0          0          0          0          0          0          0
     TASKLET:          5          0          0          0          0          0          0          0
       SCHED:       1800       1500          0          0          0          0          0          0
     HRTIMER:          0          0          0          0          0          0          0          0
         RCU:       1300       1250          0          0          0          0          0          0
`
	stat8Offline = `cpu  923 0 1500 76250 48 50 750 0 200 0
cpu0 100 0 200 11000 6 0 50 0 0 0
cpu1 101 0 200 11000 7 0 50 0 0 0
cpu2 102 0 200 11000 7 0 50 0 0 0
cpu3 103 0 200 11000 7 0 50 0 0 0
cpu4 104 0 300 10550 7 50 350 0 0 0
cpu6 106 0 200 10900 7 0 150 0 0 0
cpu7 307 0 200 10800 7 0 50 0 200 0
intr 45210 38 9 0 0 412 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 31 3 3 0 0 1 1005
ctxt 98765
btime 1764625000
processes 210
procs_running 1
procs_blocked 0
softirq 23456 1 2130 2 3331 117 0 5 3300 0 2550
`
)

var queueIRQ = regexp.MustCompile(QueueIRQPattern).MatchString

// loadTree writes a proc and sys fixture: the three proc files, uptime,
// affinity lists for IRQ 30 and eth0's statistics.
func loadTree(t *testing.T, uptime, interrupts, stat, softirqs string, net [4]string) FS {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"proc/uptime":                         uptime + " 400.00\n",
		"proc/interrupts":                     interrupts,
		"proc/stat":                           stat,
		"proc/softirqs":                       softirqs,
		"proc/irq/30/smp_affinity_list":       "4\n",
		"proc/irq/30/effective_affinity_list": "4\n",
	}
	for i, name := range []string{"rx_packets", "rx_dropped", "rx_missed_errors", "rx_fifo_errors"} {
		files["sys/class/net/eth0/statistics/"+name] = net[i] + "\n"
	}
	for p, s := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return FS{Root: root}
}

func irqNumbers(irqs []IRQCounts) []int {
	var out []int
	for _, irq := range irqs {
		out = append(out, irq.Number)
	}
	return out
}

func TestReadLoad4(t *testing.T) {
	fs := loadTree(t, "123.45", interrupts4, stat4, softirqs4, [4]string{"1000", "2", "0", "0"})
	s := fs.ReadLoad(queueIRQ, "eth0")
	if s.Errors != nil {
		t.Fatalf("errors: %q", s.Errors)
	}
	if s.UptimeS != 123.45 || !slices.Equal(s.IRQCPUs, []int{0, 1, 2, 3}) {
		t.Errorf("uptime %v irq_cpus %v", s.UptimeS, s.IRQCPUs)
	}
	// Queue IRQs only: not timer, ttyS0 or virtio0-config.
	if got, want := irqNumbers(s.IRQs), []int{24, 25, 26, 27, 28, 30, 31, 32, 33, 34, 35, 36, 37}; !slices.Equal(got, want) {
		t.Errorf("IRQs %v, want %v", got, want)
	}
	q0 := s.IRQs[5]
	if q0.Number != 30 || !slices.Equal(q0.Actions, []string{"virtio0-input.0"}) || !slices.Equal(q0.Counts, []uint64{5, 0, 0, 0}) ||
		q0.Affinity != "4" || q0.Effective != "4" {
		t.Errorf("IRQ 30: %+v", q0)
	}
	if s.IRQs[0].Affinity != "" {
		t.Errorf("IRQ 24 without affinity files: %+v", s.IRQs[0])
	}
	want := CPUTicks{CPU: 1, User: 390, System: 712, Idle: 23801, IOWait: 6, SoftIRQ: 98, NetRX: 812}
	if len(s.CPUs) != 4 || s.CPUs[1] != want {
		t.Errorf("CPUs %+v, want [1] = %+v", s.CPUs, want)
	}
	if got := s.CPUs[0].Total(); got != 401+738+23745+7+120 {
		t.Errorf("cpu0 total %d", got)
	}
	if *s.Net != (NetCounts{Iface: "eth0", RxPackets: 1000, RxDropped: 2}) {
		t.Errorf("net %+v", *s.Net)
	}
	if s := fs.ReadLoad(queueIRQ, ""); s.Net != nil {
		t.Errorf("net without an interface: %+v", s.Net)
	}
}

func TestReadLoadOfflineCPU(t *testing.T) {
	fs := loadTree(t, "110.00", interrupts8Offline, stat8Offline, softirqs8Offline, [4]string{"100000", "8", "3", "1"})
	s := fs.ReadLoad(queueIRQ, "eth0")
	if s.Errors != nil {
		t.Fatalf("errors: %q", s.Errors)
	}
	if !slices.Equal(s.IRQCPUs, []int{0, 1, 2, 3, 4, 6, 7}) {
		t.Errorf("irq_cpus %v", s.IRQCPUs)
	}
	if q0 := s.IRQs[5]; q0.Number != 30 || !slices.Equal(q0.Counts, []uint64{5, 0, 0, 0, 10000, 900, 0}) {
		t.Errorf("IRQ 30: %+v", q0)
	}
	var ids []int
	for _, c := range s.CPUs {
		ids = append(ids, c.CPU)
	}
	if !slices.Equal(ids, []int{0, 1, 2, 3, 4, 6, 7}) || s.CPUs[5].NetRX != 930 {
		t.Errorf("CPUs %+v", s.CPUs)
	}
}

// samples8 are the 8-CPU fixtures read, printed as guestcheck prints
// them and parsed back.
func samples8(t *testing.T) []LoadSample {
	t.Helper()
	var out bytes.Buffer
	for _, s := range []LoadSample{
		loadTree(t, "100.00", interrupts8, stat8, softirqs8, [4]string{"1000", "2", "0", "0"}).ReadLoad(queueIRQ, "eth0"),
		loadTree(t, "110.00", interrupts8Offline, stat8Offline, softirqs8Offline, [4]string{"100000", "8", "3", "1"}).ReadLoad(queueIRQ, "eth0"),
	} {
		if s.Errors != nil {
			t.Fatalf("errors: %q", s.Errors)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(append(b, '\n', '\n'))
	}
	ss, err := ParseLoadSamples(&out)
	if err != nil || len(ss) != 2 {
		t.Fatalf("ParseLoadSamples: %d samples, %v", len(ss), err)
	}
	return ss
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestLoadBetween(t *testing.T) {
	ss := samples8(t)
	w, err := LoadBetween(ss[0], ss[1])
	if err != nil {
		t.Fatal(err)
	}
	if !near(w.Seconds, 10) || !near(w.RxPPS, 9900) || !near(w.DropsPS, 1) {
		t.Errorf("seconds %v rx_pps %v drops_ps %v", w.Seconds, w.RxPPS, w.DropsPS)
	}
	// CPU 5 went offline: it is in neither window list.
	wantCPUs := []CPUWindow{
		{CPU: 0}, {CPU: 1}, {CPU: 2}, {CPU: 3}, // cpu0's iowait went back one tick: not negative
		{CPU: 4, SoftPct: 30, IRQPct: 5, NetRX: 9000},
		{CPU: 6, SoftPct: 10, NetRX: 900},
		{CPU: 7}, // guest time is inside user: 1000 ticks in all, not 1200
	}
	if !slices.Equal(w.CPUs, wantCPUs) {
		t.Errorf("CPUs\n%+v, want\n%+v", w.CPUs, wantCPUs)
	}
	if got := ss[1].CPUs[6].Total() - ss[0].CPUs[7].Total(); got != 1000 {
		t.Errorf("cpu7 ticks in the window %d, want 1000", got)
	}
	byIRQ := map[int]IRQWindow{}
	for _, irq := range w.IRQs {
		byIRQ[irq.Number] = irq
	}
	q0 := byIRQ[30]
	if want := map[int]uint64{0: 0, 1: 0, 2: 0, 3: 0, 4: 9000, 6: 900, 7: 0}; !maps.Equal(q0.Counts, want) || q0.Total != 9900 {
		t.Errorf("IRQ 30: %+v", q0)
	}
	if q0.Affinity != "4" || q0.Effective != "4" {
		t.Errorf("IRQ 30 lists %q %q", q0.Affinity, q0.Effective)
	}
	// nvme0q4's 3 interrupts on CPU 6 predate the window; comparing
	// columns by position would pair CPU 6 with CPU 5.
	if q4 := byIRQ[28]; q4.Total != 0 {
		t.Errorf("IRQ 28: %+v", q4)
	}
	if len(w.IRQs) != 13 {
		t.Errorf("%d IRQs in the window, want 13", len(w.IRQs))
	}
	if s := q0.Share(cpumask.New(4)); !near(s, 9000.0/9900) {
		t.Errorf("IRQ 30 share on CPU 4 = %v", s)
	}
	if s := q0.Share(cpumask.New(4, 6)); !near(s, 1) {
		t.Errorf("IRQ 30 share on CPUs 4,6 = %v", s)
	}
	if s := byIRQ[28].Share(cpumask.New(6)); s != 0 {
		t.Errorf("idle IRQ share = %v", s)
	}
	if mx, mean := w.SoftPct(cpumask.New(4, 5, 6, 7)); !near(mx, 30) || !near(mean, 40.0/3) {
		t.Errorf("SoftPct(4-7) = %v, %v; want 30, 13.33", mx, mean)
	}
	if mx, mean := w.SoftPct(cpumask.New(5)); mx != 0 || mean != 0 {
		t.Errorf("SoftPct(5) = %v, %v; want 0, 0", mx, mean)
	}
}

func TestLoadSeries(t *testing.T) {
	ss := samples8(t)
	mid := ss[0]
	mid.UptimeS = 105
	w, err := LoadSeries([]LoadSample{ss[0], mid, ss[1]})
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := LoadBetween(ss[0], ss[1]); !near(w.Seconds, want.Seconds) || !slices.Equal(w.CPUs, want.CPUs) {
		t.Errorf("series %+v, want %+v", w, want)
	}
	if _, err := LoadSeries(ss[:1]); err == nil || !strings.Contains(err.Error(), "1 load samples") {
		t.Errorf("one sample: %v", err)
	}
}

func TestLoadBetweenErrors(t *testing.T) {
	ss := samples8(t)
	if _, err := LoadBetween(ss[1], ss[0]); err == nil || !strings.Contains(err.Error(), "uptime 100.000s is not after the one at 110.000s") {
		t.Errorf("reversed: %v", err)
	}
	bad := ss[1]
	bad.IRQs = slices.Clone(bad.IRQs)
	bad.IRQs[0].Counts = bad.IRQs[0].Counts[:3]
	if _, err := LoadBetween(ss[0], bad); err == nil || !strings.Contains(err.Error(), "IRQ 24 has 3 counts for 7 CPU columns") {
		t.Errorf("short counts: %v", err)
	}
}

func TestParseLoadSamplesError(t *testing.T) {
	_, err := ParseLoadSamples(strings.NewReader("{}\n\nnot json\n"))
	if err == nil || !strings.Contains(err.Error(), `line 3 "not json"`) {
		t.Errorf("error %v, want it to name line 3", err)
	}
	if ss, err := ParseLoadSamples(strings.NewReader("")); err != nil || len(ss) != 0 {
		t.Errorf("empty input: %v, %v", ss, err)
	}
}

func TestReadLoadErrors(t *testing.T) {
	fs := loadTree(t, "1.00", "CPU0 CPU1\n 30: 1\n", "cpu  1 2\ncpu0 1 2 3 4 5 6 7 x\ncpu1 1 2 3\n", "CPU0 CPU1\nNET_RX: 1\n", [4]string{"1", "x", "0", "0"})
	if err := os.Remove(filepath.Join(fs.Root, "sys/class/net/eth0/statistics/rx_fifo_errors")); err != nil {
		t.Fatal(err)
	}
	s := fs.ReadLoad(queueIRQ, "eth0")
	text := strings.Join(s.Errors, "\n")
	for _, want := range []string{
		fs.Root + "/proc/interrupts: line 2",
		fs.Root + `/proc/stat: "cpu0 1 2 3 4 5 6 7 x"`,
		fs.Root + `/proc/stat: "cpu1 1 2 3": 3 fields, want at least 8 after cpu1`,
		fs.Root + "/proc/softirqs: NET_RX has 1 counts for 2 CPU columns",
		fs.Root + `/sys/class/net/eth0/statistics/rx_dropped: "x"`,
		"rx_fifo_errors: no such file",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("errors lack %q:\n%s", want, text)
		}
	}
}

func TestParseNetRX(t *testing.T) {
	got, err := parseNetRX(softirqs8Offline)
	if err != nil || len(got) != 8 || got[5] != 20 || got[6] != 930 {
		t.Errorf("parseNetRX = %v, %v", got, err)
	}
	for in, want := range map[string]string{
		"":                         "no NET_RX line",
		"CPU0 X1\n":                `header token "X1" is not CPUn`,
		"CPU0\nNET_RX: -1\n":       `NET_RX count "-1" for CPU0`,
		"CPU0\nHI: 1\nNET_TX: 2\n": "no NET_RX line",
	} {
		if _, err := parseNetRX(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseNetRX(%q) = %v, want %q", in, err, want)
		}
	}
}

func FuzzLoadParsers(f *testing.F) {
	f.Add(softirqs4, `{"uptime_s":1,"irq_cpus":[0],"irqs":[{"irq":1,"counts":[1]}]}`+"\n"+`{"uptime_s":2,"irq_cpus":[1],"irqs":[{"irq":1,"counts":[2]}]}`)
	f.Fuzz(func(t *testing.T, softirqs, samples string) {
		_, _ = parseNetRX(softirqs)
		ss, err := ParseLoadSamples(strings.NewReader(samples))
		if err == nil && len(ss) >= 2 {
			if w, err := LoadSeries(ss); err == nil {
				w.SoftPct(cpumask.New(0, 1, 2, 3))
			}
		}
	})
}

func TestBusy(t *testing.T) {
	w := LoadWindow{IRQs: []IRQWindow{
		{Number: 1, Actions: []string{"virtio0-input.0"}, Total: 980},
		{Number: 2, Actions: []string{"virtio0-input.1"}, Total: 19},    // 1.9%: idle
		{Number: 3, Actions: []string{"virtio0-output.0"}, Total: 5000}, // not rx
		{Number: 4, Actions: []string{"virtio0-input.2"}, Total: 1},
	}}
	rx := func(q IRQWindow) bool { return strings.Contains(q.Actions[0], "-input.") }
	got := w.Busy(rx)
	if len(got) != 1 || got[0].Number != 1 {
		t.Errorf("Busy = %+v, want IRQ 1 only", got)
	}
	if got := (LoadWindow{IRQs: []IRQWindow{{Actions: []string{"virtio0-input.0"}}}}).Busy(rx); len(got) != 0 {
		t.Errorf("a window without interrupts: Busy = %+v", got)
	}
}
