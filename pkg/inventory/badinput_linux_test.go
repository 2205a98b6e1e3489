package inventory

import (
	"errors"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// maxErrLen bounds every error about a bad file: the path, the line,
// what is wrong and at most ~100 bytes of the value.
const maxErrLen = 512

// TestParseInterruptsRows checks the rows show_interrupts() never prints
// and those it does: a label is "%*d:" or a counter name "%*s:", and a
// chip name, not a number, follows the counts.
func TestParseInterruptsRows(t *testing.T) {
	const hdr = "           CPU0       CPU1\n"
	for _, tc := range []struct {
		name, in string
		want     string // error substring; "" for success
		rows     []int  // the IRQs parsed, on success
	}{
		{name: "one count too many", in: hdr + "  24:          1          2          3   PCI-MSIX-0000:41:00.0  1-edge  eth0\n",
			want: `line 2 "  24:          1          2          3   PCI-MSIX-0000:41:00.0  1-edge  eth0": more counts than the 2 CPU columns`},
		{name: "counts only, one too many", in: hdr + " 7: 1 2 3\n", want: "line 2 \" 7: 1 2 3\": more counts than the 2 CPU columns"},
		{name: "colon only past the label", in: hdr + "  24  1  2  PCI-MSIX-0000:41:00.0  1-edge  eth0\n",
			want: `line 2 "  24  1  2  PCI-MSIX-0000:41:00.0  1-edge  eth0": no colon after the IRQ label`},
		{name: "no colon anywhere", in: hdr + " NMI 1 2\n", want: "line 2 \" NMI 1 2\": no colon after the IRQ label"},
		{name: "negative IRQ", in: hdr + " -27:  1  2  IO-APIC  2-edge  timer\n",
			want: `line 2 " -27:  1  2  IO-APIC  2-edge  timer": label "-27" is neither an IRQ number nor a counter name such as NMI`},
		{name: "IRQ with junk", in: hdr + " 2x7:  1  2  IO-APIC\n", want: `label "2x7" is neither`},
		{name: "label of punctuation", in: hdr + " *:  1  2\n", want: `label "*" is neither`},
		{name: "line past the line limit", in: hdr + " 1: " + strings.Repeat("1", maxInterruptsLine) + "\n",
			want: "line 2: longer than the limit of 1048576 bytes: malformed"},
		{name: "a 900 KB row is quoted cut", in: hdr + " 1: 1 " + strings.Repeat("y", 900<<10) + "\n", want: `count "yyy`},
		// What kernels print stays valid: x86, arm64, s390 and ppc
		// counter rows, chips that start with a digit-free name, rows
		// without actions, hwirq numbers after the chip.
		{name: "counter rows", in: hdr +
			"   0:         36          0   IO-APIC   2-edge      timer\n" +
			"  27:          0          0  PCI-MSI 49152-edge      virtio0-config\n" +
			"  11:          1          2     GICv3  27 Level     arch_timer\n" +
			"  12:          1          2   xen-dyn    -edge      xen-pirq\n" +
			"  13:          0          0      None\n" +
			" NMI:          0          0   Non-maskable interrupts\n" +
			" LOC:      35890      35032   Local timer interrupts\n" +
			" PIN:          0          0   Posted-interrupt notification event\n" +
			" NPI:          0          0   Nested posted-interrupt event\n" +
			" PIW:          0          0   Posted-interrupt wakeup event\n" +
			"IPI0:          1          1   Rescheduling interrupts\n" +
			" Err:          0\n" +
			" ERR:          0\n" +
			" MIS:          0\n" +
			" I/O:          7          9   [I/O]\n",
			rows: []int{0, 27, 11, 12, 13}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseInterrupts(strings.NewReader(tc.in))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				var irqs []int
				for _, r := range got.Rows {
					irqs = append(irqs, r.IRQ)
				}
				if !reflect.DeepEqual(irqs, tc.rows) {
					t.Errorf("rows %v, want %v", irqs, tc.rows)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %.600v, want it to contain %q", err, tc.want)
			}
			if len(err.Error()) > maxErrLen {
				t.Errorf("error is %d bytes, want at most %d", len(err.Error()), maxErrLen)
			}
			if !errors.Is(err, kernfs.ErrMalformed) {
				t.Errorf("err %v does not wrap ErrMalformed", err)
			}
		})
	}
}

// TestReadBadFiles checks that garbage, oversized, empty or blocking
// files under proc give a short error naming the file, never hang, and
// wrap kernfs.ErrMalformed.
func TestReadBadFiles(t *testing.T) {
	const list = "proc/irq/24/smp_affinity_list"
	big := strings.Repeat("x", 5<<20)
	page := strings.Repeat("x", 60<<10)
	write := func(rel, content string) func(*testing.T, *fakesys.Tree) {
		return func(_ *testing.T, tr *fakesys.Tree) { tr.WriteFile(rel, content) }
	}
	fifo := func(rel string) func(*testing.T, *fakesys.Tree) {
		return func(t *testing.T, tr *fakesys.Tree) {
			tr.Remove(rel)
			if err := syscall.Mkfifo(tr.Path(rel), 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}
	}
	for _, tc := range []struct {
		name    string
		corrupt func(*testing.T, *fakesys.Tree)
		file    string // the error names it
		want    string // and says this
	}{
		{"5 MB smp_affinity_list", write(list, big), list, "malformed: longer than the limit of 65536 bytes"},
		{"60 KB garbage smp_affinity_list", write(list, page), list,
			`: invalid CPU mask list "` + strings.Repeat("x", 100) + `"... (61440 bytes): element of 61440 bytes: not a CPU number`},
		{"empty smp_affinity_list", write(list, "\n"), list, "malformed: empty, want the IRQ's CPU list"},
		{"FIFO smp_affinity_list", fifo(list), list, "malformed: not a regular file (a named pipe)"},
		{"FIFO interrupts", fifo("proc/interrupts"), "proc/interrupts", "malformed: not a regular file (a named pipe)"},
		{"interrupts row with an extra count", write("proc/interrupts", "  CPU0 CPU1\n 24: 1 2 3 PCI-MSIX 1-edge eth0\n"),
			"proc/interrupts: line 2", "more counts than the 2 CPU columns"},
		{"interrupts negative IRQ", write("proc/interrupts", "  CPU0 CPU1\n 24: 1 2 PCI-MSIX 1-edge eth0\n-27: 1 2 x\n"),
			"proc/interrupts: line 3", `label "-27" is neither`},
		{"interrupts over the size limit", func(_ *testing.T, tr *fakesys.Tree) {
			old := maxInterruptsSize
			maxInterruptsSize = 1 << 10
			t.Cleanup(func() { maxInterruptsSize = old })
			tr.WriteFile("proc/interrupts", "  CPU0 CPU1\n"+strings.Repeat(" NMI: 0 0 x\n", 200))
		}, "proc/interrupts", "malformed: longer than the limit of 1024 bytes"},
		{"PCI irq garbage", write("sys/bus/pci/devices/0000:00:03.0/irq", page), "sys/bus/pci/devices/0000:00:03.0/irq", `"... (61440 bytes) is not an IRQ number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := fakesys.New(t)
			tr.AddInterrupts([]int{0, 1})
			tr.AddIRQ(fakesys.IRQSpec{Number: 24, Name: "eth0", Effective: "1"})
			tr.WriteFile("sys/bus/pci/devices/0000:00:03.0/irq", "24\n")
			if _, err := fsOf(tr).Read(); err != nil {
				t.Fatalf("good tree: %v", err)
			}
			tc.corrupt(t, tr)
			var (
				err error
				inv *Inventory
			)
			done := make(chan struct{})
			go func() {
				defer close(done)
				inv, err = fsOf(tr).Read()
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Read blocked")
			}
			// One IRQ's own files degrade that IRQ, not the read.
			perIRQ := strings.HasPrefix(tc.file, "proc/irq/24/")
			if perIRQ {
				if err != nil {
					t.Fatalf("Read failed on one IRQ's file: %v", err)
				}
				q, ok := inv.IRQ(24)
				if !ok || q.Unreadable == "" {
					t.Fatalf("IRQ 24 = %+v, want it listed and Unreadable", q)
				}
				err = errors.New(q.Unreadable)
			}
			if err == nil {
				t.Fatalf("Read succeeded, want an error naming %s", tc.file)
			}
			msg := err.Error()
			if !strings.Contains(msg, tr.Path(tc.file)) || !strings.Contains(msg, tc.want) {
				t.Errorf("error %.600q does not name %s and say %q", msg, tc.file, tc.want)
			}
			if len(msg) > maxErrLen {
				t.Errorf("error is %d bytes, want at most %d: %.600q", len(msg), maxErrLen, msg)
			}
			if !perIRQ && !errors.Is(err, kernfs.ErrMalformed) {
				t.Errorf("error %v does not wrap kernfs.ErrMalformed", err)
			}
		})
	}
}
