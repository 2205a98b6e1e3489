package inventory

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

func TestParseInterrupts(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		cpus    []int
		rows    []InterruptLine
		wantErr string // substring; "" means success
	}{
		{
			name: "offline CPU 1: columns map to header ids",
			in: "            CPU0       CPU2       CPU3\n" +
				"  24:          1          5          7  PCI-MSIX-0000:41:00.0  1-edge  virtio0-input.0\n" +
				"NMI:          0          0          0   Non-maskable interrupts\n" +
				"ERR:          0\n",
			cpus: []int{0, 2, 3},
			rows: []InterruptLine{{IRQ: 24, Counts: []uint64{1, 0, 5, 7}, Chip: "PCI-MSIX-0000:41:00.0", HWIRQ: "1-edge", Actions: []string{"virtio0-input.0"}}},
		},
		{
			name: "IO-APIC timer and shared actions",
			in: "           CPU0       CPU1\n" +
				"   0:         36          0   IO-APIC   2-edge      timer\n" +
				"  16:          3          4   IO-APIC  16-fasteoi   ehci_hcd:usb1, eth0\n" +
				"LOC:      35890      35032   Local timer interrupts\n",
			cpus: []int{0, 1},
			rows: []InterruptLine{
				{IRQ: 0, Counts: []uint64{36, 0}, Chip: "IO-APIC", HWIRQ: "2-edge", Actions: []string{"timer"}},
				{IRQ: 16, Counts: []uint64{3, 4}, Chip: "IO-APIC", HWIRQ: "16-fasteoi", Actions: []string{"ehci_hcd:usb1", "eth0"}},
			},
		},
		{
			name: "no actions, ARM level column, detached handler",
			in: "  CPU0 CPU1\n" +
				"  9:  0  0  IR-PCI-MSI  524288-edge\n" +
				" 11:  1  2  GICv3  27 Level     arch_timer\n" +
				" 12:  1  2  xen-dyn  -edge  xen-pirq\n" +
				"IPI0:  1  1  Rescheduling interrupts\n",
			cpus: []int{0, 1},
			rows: []InterruptLine{
				{IRQ: 9, Counts: []uint64{0, 0}, Chip: "IR-PCI-MSI", HWIRQ: "524288-edge"},
				{IRQ: 11, Counts: []uint64{1, 2}, Chip: "GICv3", HWIRQ: "27 Level", Actions: []string{"arch_timer"}},
				{IRQ: 12, Counts: []uint64{1, 2}, Chip: "xen-dyn", HWIRQ: "-edge", Actions: []string{"xen-pirq"}},
			},
		},
		{
			// testdata/hosts/sources/rbench.txt: no hwirq column, ahci named by its BDF
			name: "old kernel: chip and trigger in one column, a name that starts with a digit",
			in: "  CPU0 CPU1\n" +
				"  78:  0  0  IR-PCI-MSI-edge      0000:00:11.5\n" +
				" 128:  0  3  IR-PCI-MSI-edge      p7p1-TxRx-0\n",
			cpus: []int{0, 1},
			rows: []InterruptLine{
				{IRQ: 78, Counts: []uint64{0, 0}, Chip: "IR-PCI-MSI-edge", Actions: []string{"0000:00:11.5"}},
				{IRQ: 128, Counts: []uint64{0, 3}, Chip: "IR-PCI-MSI-edge", Actions: []string{"p7p1-TxRx-0"}},
			},
		},
		{
			name: "blank lines and counts only",
			in:   "\n CPU5\n\n 7: 99\n",
			cpus: []int{5},
			rows: []InterruptLine{{IRQ: 7, Counts: []uint64{0, 0, 0, 0, 0, 99}}},
		},
		{name: "empty", in: "", wantErr: "no CPU header"},
		{name: "bad header", in: "CPU0 CPUx\n", wantErr: `line 1 "CPU0 CPUx": header token "CPUx" is not CPUn`},
		{name: "duplicate header CPU", in: "CPU0 CPU0\n", wantErr: "twice"},
		{name: "huge header CPU", in: "CPU99999\n", wantErr: "beyond the limit"},
		{name: "non-numeric count", in: "CPU0 CPU1\n 24: 1 x PCI 1-edge a\n", wantErr: `line 2 " 24: 1 x PCI 1-edge a": count "x" for CPU1 is not a number`},
		{name: "too few counts", in: "CPU0 CPU1\n 24: 1\n", wantErr: "line 2 \" 24: 1\": 1 counts, want one per CPU column (2)"},
		{name: "missing colon", in: "CPU0\n 24 1 PCI\n", wantErr: `line 2 " 24 1 PCI": no colon`},
		{name: "empty label", in: "CPU0\n : 1\n", wantErr: "empty IRQ label"},
		{name: "duplicate IRQ", in: "CPU0\n 1: 1\n 1: 2\n", wantErr: "line 3 \" 1: 2\": IRQ 1 listed twice"},
		{name: "count overflow", in: "CPU0\n 1: 99999999999999999999999\n", wantErr: "is not a number"},
		{name: "IRQ overflow", in: "CPU0\n 99999999999999999999999: 1\n", wantErr: "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseInterrupts(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if !errors.Is(err, kernfs.ErrMalformed) {
					t.Errorf("err %v does not wrap ErrMalformed", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.CPUs, tt.cpus) {
				t.Errorf("CPUs = %v, want %v", got.CPUs, tt.cpus)
			}
			if !reflect.DeepEqual(got.Rows, tt.rows) {
				t.Errorf("Rows =\n%#v\nwant\n%#v", got.Rows, tt.rows)
			}
		})
	}
}

func TestParseInterruptsLongLineQuoteIsTruncated(t *testing.T) {
	in := "CPU0\n 1: " + strings.Repeat("x", 1000) + "\n"
	_, err := ParseInterrupts(strings.NewReader(in))
	if err == nil || len(err.Error()) > 400 {
		t.Fatalf("err = %v, want a short error", err)
	}
}

func FuzzParseInterrupts(f *testing.F) {
	f.Add("           CPU0       CPU1\n   0:   36   0   IO-APIC   2-edge      timer\nNMI: 0 0 x\n")
	f.Add("  CPU0 CPU2 CPU3\n  24:   0   5  1 PCI-MSIX-0000:41:00.0  1-edge  virtio0-input.0, b\nERR: 0\n")
	f.Add(" CPU1\n 11: 1 GICv3 27 Level arch_timer\n 12: 1 xen -edge\n")
	f.Add("CPU8191\n 1: 1\n")
	f.Add("CPU0\n 1 2\n:\n")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseInterrupts(strings.NewReader(in))
		if err != nil {
			return
		}
		width := 0
		for _, c := range got.CPUs {
			width = max(width, c+1)
		}
		for _, r := range got.Rows {
			if len(r.Counts) != width {
				t.Fatalf("IRQ %d has %d counts, want %d", r.IRQ, len(r.Counts), width)
			}
		}
	})
}
