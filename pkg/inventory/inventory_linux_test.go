package inventory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/internal/syscount"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

func fsOf(tr *fakesys.Tree) FS { return FS{Proc: tr.Proc(), Sys: tr.Sys()} }

func mustIRQ(t *testing.T, inv *Inventory, n int) IRQ {
	t.Helper()
	q, ok := inv.IRQ(n)
	if !ok {
		t.Fatalf("IRQ %d missing; have %v", n, irqNumbers(inv))
	}
	return q
}

func mustDevice(t *testing.T, inv *Inventory, bdf string) Device {
	t.Helper()
	d, ok := inv.Device(bdf)
	if !ok {
		t.Fatalf("device %s missing", bdf)
	}
	return d
}

func irqNumbers(inv *Inventory) []int {
	var out []int
	for _, q := range inv.IRQs {
		out = append(out, q.Number)
	}
	return out
}

// owners returns "number:device" per IRQ number, for compact
// comparisons; how a device's IRQs are classified is pkg/policy's test.
func owners(inv *Inventory, nums ...int) []string {
	var out []string
	for _, n := range nums {
		q, _ := inv.IRQ(n)
		out = append(out, fmt.Sprintf("%d:%s", n, q.Device))
	}
	return out
}

func TestRead(t *testing.T) {
	tests := []struct {
		name  string
		build func(tr *fakesys.Tree)
		check func(t *testing.T, inv *Inventory)
	}{
		{
			name: "header with offline CPU maps columns by id",
			build: func(tr *fakesys.Tree) {
				tr.AddInterrupts([]int{0, 2, 3})
				tr.AddIRQ(fakesys.IRQSpec{Number: 0, Name: "timer", Chip: "IO-APIC", HWIRQ: "2-edge", Counts: []uint64{36, 0, 9}})
				tr.AddIRQ(fakesys.IRQSpec{Number: 24, Name: "acpi", Counts: []uint64{1, 5, 7}, Affinity: "2", Node: -1})
			},
			check: func(t *testing.T, inv *Inventory) {
				if got := inv.CPUs.String(); got != "0,2-3" {
					t.Errorf("CPUs = %q", got)
				}
				q := mustIRQ(t, inv, 24)
				if q.Affinity.String() != "2" || q.Device != "" {
					t.Errorf("IRQ 24 = %+v", q)
				}
				timer := mustIRQ(t, inv, 0)
				if timer.Name != "timer" || timer.Affinity.String() != "0,2-3" || timer.Managed {
					t.Errorf("IRQ 0 = %+v", timer)
				}
			},
		},
		{
			name: "virtio-net through the virtio child, under a bridge",
			build: func(tr *fakesys.Tree) {
				tr.AddInterrupts([]int{0, 1, 2, 3})
				tr.AddPCIDevice(fakesys.PCIDevice{BDF: "0000:40:01.1", Driver: "pcieport", Class: "0x060400", NUMANode: 1})
				tr.AddMSIXDevice(fakesys.PCIDevice{
					BDF: "0000:41:00.0", Parent: "0000:40:01.1", NUMANode: 1, Driver: "virtio-pci", Class: "0x020000",
					Interfaces: []string{"eth0"}, VirtioChild: "virtio0", VirtioDriver: "virtio_net",
				},
					fakesys.IRQSpec{Number: 30, Name: "virtio0-config"},
					fakesys.IRQSpec{Number: 31, Name: "virtio0-input.0", Effective: "1"},
					fakesys.IRQSpec{Number: 32, Name: "virtio0-output.0"},
					fakesys.IRQSpec{Number: 33, Name: "virtio0-input.1"},
					fakesys.IRQSpec{Number: 34, Name: "virtio0-output.1"},
				)
				tr.AddVirtioNet(fakesys.VirtioNet{BDF: "0000:00:03.0", Index: 2, Interface: "ens3", Pairs: 1, FirstIRQ: 40})
				tr.Mkdir("sys/devices/virtual/net/lo")
				tr.Symlink("../../devices/virtual/net/lo", "sys/class/net/lo")
				// An interface directory that is not a link, as a copied
				// tree has: its device link is followed instead.
				tr.Symlink(tr.Path(fakesys.DevicePath("0000:00:03.0", "")+"/virtio2"), "sys/class/net/ens9/device")
			},
			check: func(t *testing.T, inv *Inventory) {
				d := mustDevice(t, inv, "0000:41:00.0")
				want := Device{
					PCI: "0000:41:00.0", Driver: "virtio-pci", Drivers: []string{"virtio-pci", "virtio_net"},
					Class: "0x020000", NUMANode: 1, Interfaces: []string{"eth0"}, IRQs: []int{30, 31, 32, 33, 34},
				}
				if !reflect.DeepEqual(d, want) {
					t.Errorf("device =\n%+v\nwant\n%+v", d, want)
				}
				if br := mustDevice(t, inv, "0000:40:01.1"); len(br.Interfaces) != 0 || len(br.IRQs) != 0 {
					t.Errorf("bridge = %+v", br)
				}
				if got := mustDevice(t, inv, "0000:00:03.0"); !reflect.DeepEqual(got.Interfaces, []string{"ens3", "ens9"}) || !reflect.DeepEqual(got.IRQs, []int{40, 41, 42}) {
					t.Errorf("second virtio-net = %+v", got)
				}
				got := owners(inv, 30, 31, 32, 33, 34, 40, 41, 42)
				wantQ := []string{"30:0000:41:00.0", "31:0000:41:00.0", "32:0000:41:00.0", "33:0000:41:00.0", "34:0000:41:00.0",
					"40:0000:00:03.0", "41:0000:00:03.0", "42:0000:00:03.0"}
				if !reflect.DeepEqual(got, wantQ) {
					t.Errorf("owners = %v, want %v", got, wantQ)
				}
				q := mustIRQ(t, inv, 31)
				if q.Device != "0000:41:00.0" || q.Name != "virtio0-input.0" {
					t.Errorf("IRQ 31 = %+v", q)
				}
				if len(inv.Devices) != 3 || inv.Devices[0].PCI != "0000:00:03.0" || inv.Devices[2].PCI != "0000:41:00.0" {
					t.Errorf("devices not sorted by BDF: %+v", inv.Devices)
				}
			},
		},
		{
			name: "INTx devices, shared line, plain directory entry",
			build: func(tr *fakesys.Tree) {
				tr.AddInterrupts([]int{0, 1})
				tr.AddIRQ(fakesys.IRQSpec{Number: 16, Name: "ehci_hcd:usb1, eth1", Chip: "IO-APIC", HWIRQ: "16-fasteoi"})
				tr.AddIRQ(fakesys.IRQSpec{Number: 19, Name: "snd_hda_intel:card0", Chip: "IO-APIC", HWIRQ: "19-fasteoi"})
				tr.AddPCIDevice(fakesys.PCIDevice{BDF: "0000:00:1d.0", IRQ: 16, Driver: "ehci-pci", Class: "0x0c0320", NUMANode: -1})
				tr.AddPCIDevice(fakesys.PCIDevice{BDF: "0000:02:00.0", IRQ: 16, Driver: "e100", Interfaces: []string{"eth1"}})
				tr.AddPCIDevice(fakesys.PCIDevice{BDF: "0000:00:00.0", Class: "0x060000"}) // host bridge: irq 0
				// A plain directory instead of a symlink, no numa_node, no driver.
				tr.WriteFile("sys/bus/pci/devices/0000:00:1b.0/irq", "19\n")
				tr.WriteFile("sys/bus/pci/devices/0000:00:1b.0/class", "0x040300\n")
			},
			check: func(t *testing.T, inv *Inventory) {
				if d := mustDevice(t, inv, "0000:00:00.0"); len(d.IRQs) != 0 || d.Driver != "" || d.Drivers != nil {
					t.Errorf("host bridge = %+v", d)
				}
				ehci := mustDevice(t, inv, "0000:00:1d.0")
				if !reflect.DeepEqual(ehci.IRQs, []int{16}) || ehci.NUMANode != -1 || ehci.Driver != "ehci-pci" {
					t.Errorf("ehci = %+v", ehci)
				}
				nic := mustDevice(t, inv, "0000:02:00.0")
				if !reflect.DeepEqual(nic.IRQs, []int{16}) || !reflect.DeepEqual(nic.Interfaces, []string{"eth1"}) {
					t.Errorf("nic = %+v", nic)
				}
				q := mustIRQ(t, inv, 16)
				if q.Device != "0000:00:1d.0" || !reflect.DeepEqual(q.Actions, []string{"ehci_hcd:usb1", "eth1"}) {
					t.Errorf("IRQ 16 = %+v", q)
				}
				audio := mustDevice(t, inv, "0000:00:1b.0")
				want := Device{PCI: "0000:00:1b.0", Class: "0x040300", NUMANode: -1, IRQs: []int{19}}
				if !reflect.DeepEqual(audio, want) {
					t.Errorf("audio = %+v, want %+v", audio, want)
				}
			},
		},
		{
			name: "NVMe with managed queues",
			build: func(tr *fakesys.Tree) {
				tr.AddInterrupts([]int{0, 1, 2, 3})
				specs := []fakesys.IRQSpec{{Number: 60, Name: "nvme0q0", Node: 0}}
				for k := 1; k <= 4; k++ {
					cpu := fmt.Sprint(k - 1)
					specs = append(specs, fakesys.IRQSpec{
						Number: 60 + k, Name: fmt.Sprintf("nvme0q%d", k), Affinity: cpu, Effective: cpu, Hint: cpu, Managed: true, Node: 0,
					})
				}
				tr.AddMSIXDevice(fakesys.PCIDevice{BDF: "0000:c1:00.0", Driver: "nvme", Class: "0x010802"}, specs...)
			},
			check: func(t *testing.T, inv *Inventory) {
				admin := mustIRQ(t, inv, 60)
				if admin.Managed || admin.ManagedReason != "" || admin.Device != "0000:c1:00.0" {
					t.Errorf("admin = %+v", admin)
				}
				for k := 1; k <= 4; k++ {
					q := mustIRQ(t, inv, 60+k)
					cpu := cpumask.New(k - 1)
					if !q.Managed || q.ManagedReason != "read-only smp_affinity" {
						t.Errorf("IRQ %d not managed: %+v", q.Number, q)
					}
					if !q.Affinity.Equal(cpu) {
						t.Errorf("IRQ %d masks = %+v", q.Number, q)
					}
				}
				if got := len(inv.DeviceIRQs("0000:c1:00.0")); got != 5 {
					t.Errorf("DeviceIRQs = %d IRQs", got)
				}
			},
		},
		{
			name: "read-only smp_affinity alone marks managed",
			build: func(tr *fakesys.Tree) {
				tr.AddInterrupts([]int{0})
				tr.AddIRQ(fakesys.IRQSpec{Number: 5, Name: "x"})
				if err := os.Chmod(tr.Path("proc/irq/5/smp_affinity"), 0o444); err != nil {
					panic(err)
				}
			},
			check: func(t *testing.T, inv *Inventory) {
				if q := mustIRQ(t, inv, 5); !q.Managed {
					t.Errorf("IRQ 5 = %+v", q)
				}
			},
		},
		{
			name: "mlx5, MANA and Intel naming, normalised per device",
			build: func(tr *fakesys.Tree) {
				tr.AddInterrupts([]int{0, 1})
				tr.AddMSIXDevice(fakesys.PCIDevice{BDF: "0000:81:00.0", Driver: "mlx5_core", Interfaces: []string{"enp129s0f0np0"}},
					fakesys.IRQSpec{Number: 100, Name: "mlx5_async0@pci:0000:81:00.0"},
					fakesys.IRQSpec{Number: 101, Name: "mlx5_comp0@pci:0000:81:00.0"},
					fakesys.IRQSpec{Number: 102, Name: "mlx5_comp1@pci:0000:81:00.0"})
				tr.AddMSIXDevice(fakesys.PCIDevice{BDF: "7870:00:00.0", Driver: "mana"},
					fakesys.IRQSpec{Number: 110, Name: "mana_hwc@pci:7870:00:00.0"},
					fakesys.IRQSpec{Number: 111, Name: "mana_q1@pci:7870:00:00.0"},
					fakesys.IRQSpec{Number: 112, Name: "mana_q2@pci:7870:00:00.0"})
				tr.AddMSIXDevice(fakesys.PCIDevice{BDF: "0000:3b:00.0", Driver: "ice", Interfaces: []string{"ens1f0"}},
					fakesys.IRQSpec{Number: 120, Name: "ice-0000:3b:00.0:misc"},
					fakesys.IRQSpec{Number: 121, Name: "ens1f0-TxRx-0"},
					fakesys.IRQSpec{Number: 122, Name: "ens1f0-TxRx-1"})
			},
			check: func(t *testing.T, inv *Inventory) {
				got := owners(inv, 100, 101, 102, 110, 111, 112, 120, 121, 122)
				want := []string{
					"100:0000:81:00.0", "101:0000:81:00.0", "102:0000:81:00.0",
					"110:7870:00:00.0", "111:7870:00:00.0", "112:7870:00:00.0",
					"120:0000:3b:00.0", "121:0000:3b:00.0", "122:0000:3b:00.0",
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("owners = %v, want %v", got, want)
				}
			},
		},
		{
			name: "vanished /proc/irq/N is skipped",
			build: func(tr *fakesys.Tree) {
				tr.AddInterrupts([]int{0, 1})
				tr.AddMSIXDevice(fakesys.PCIDevice{BDF: "0000:05:00.0", Driver: "nvme"},
					fakesys.IRQSpec{Number: 50, Name: "nvme0q0"},
					fakesys.IRQSpec{Number: 51, Name: "nvme0q1"},
					fakesys.IRQSpec{Number: 52, Name: "nvme0q2"})
				tr.Remove("proc/irq/51")
				// Half gone: smp_affinity_list read, then the rest vanished.
				tr.Remove("proc/irq/52/node")
				tr.Remove("proc/irq/52/affinity_hint")
			},
			check: func(t *testing.T, inv *Inventory) {
				if _, ok := inv.IRQ(51); ok {
					t.Error("IRQ 51 listed")
				}
				if got := irqNumbers(inv); !reflect.DeepEqual(got, []int{50, 52}) {
					t.Errorf("IRQs = %v", got)
				}
				if d := mustDevice(t, inv, "0000:05:00.0"); !reflect.DeepEqual(d.IRQs, []int{50, 52}) {
					t.Errorf("device IRQs = %v", d.IRQs)
				}
				if q := mustIRQ(t, inv, 52); q.Device != "0000:05:00.0" {
					t.Errorf("IRQ 52 = %+v", q)
				}
			},
		},
		{
			name: "no PCI and no net: IRQs only",
			build: func(tr *fakesys.Tree) {
				tr.AddInterrupts([]int{0})
				tr.AddIRQ(fakesys.IRQSpec{Number: 1, Name: "i8042"})
			},
			check: func(t *testing.T, inv *Inventory) {
				if len(inv.Devices) != 0 || len(inv.IRQs) != 1 {
					t.Errorf("inv = %+v", inv)
				}
				if _, ok := inv.Device("0000:00:00.0"); ok {
					t.Error("found a device")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := fakesys.New(t)
			tt.build(tr)
			inv, err := fsOf(tr).Read()
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, inv)
		})
	}
}

func TestReadErrors(t *testing.T) {
	base := func(tr *fakesys.Tree) {
		tr.AddInterrupts([]int{0, 1})
		tr.AddMSIXDevice(fakesys.PCIDevice{BDF: "0000:05:00.0", Driver: "nvme"},
			fakesys.IRQSpec{Number: 50, Name: "nvme0q0"})
	}
	tests := []struct {
		name  string
		build func(tr *fakesys.Tree)
		file  string   // relative to the tree; must appear in the error
		want  []string // more substrings
		is    error
	}{
		{
			name:  "missing interrupts",
			build: func(tr *fakesys.Tree) { tr.Mkdir("proc/irq") },
			file:  "proc/interrupts",
			want:  []string{"no such file"},
			is:    fs.ErrNotExist,
		},
		{
			name: "malformed interrupts line",
			build: func(tr *fakesys.Tree) {
				tr.Mkdir("proc/irq")
				tr.WriteFile("proc/interrupts", "  CPU0  CPU1\n  24:  1  2  PCI  1-edge  a\n  25:  1  oops  PCI  1-edge  b\n")
			},
			file: "proc/interrupts",
			want: []string{`line 3 "  25:  1  oops  PCI  1-edge  b"`, `count "oops" for CPU1`},
			is:   kernfs.ErrMalformed,
		},
		{
			name: "garbage smp_affinity_list",
			build: func(tr *fakesys.Tree) {
				base(tr)
				tr.WriteFile("proc/irq/50/smp_affinity_list", "zz-top\n")
			},
			file: "proc/irq/50/smp_affinity_list",
			want: []string{`"zz-top"`},
			is:   kernfs.ErrMalformed,
		},
		{
			name: "missing smp_affinity_list in a present directory",
			build: func(tr *fakesys.Tree) {
				base(tr)
				tr.Remove("proc/irq/50/smp_affinity_list")
			},
			file: "proc/irq/50/smp_affinity_list",
			is:   fs.ErrNotExist,
		},
		{
			name: "no proc/irq at all",
			build: func(tr *fakesys.Tree) {
				tr.AddInterrupts([]int{0})
			},
			file: "proc/irq",
			is:   fs.ErrNotExist,
		},
		{
			name: "garbage numa_node",
			build: func(tr *fakesys.Tree) {
				base(tr)
				tr.WriteFile(fakesys.DevicePath("0000:05:00.0", "")+"/numa_node", "-7\n")
			},
			file: "0000:05:00.0/numa_node",
			want: []string{`"-7"`},
			is:   kernfs.ErrMalformed,
		},
		{
			name: "garbage msi_irqs entry",
			build: func(tr *fakesys.Tree) {
				base(tr)
				tr.WriteFile(fakesys.DevicePath("0000:05:00.0", "")+"/msi_irqs/x1", "msix\n")
			},
			file: "0000:05:00.0/msi_irqs",
			want: []string{`"x1"`},
			is:   kernfs.ErrMalformed,
		},
		{
			name: "garbage legacy irq",
			build: func(tr *fakesys.Tree) {
				base(tr)
				tr.AddPCIDevice(fakesys.PCIDevice{BDF: "0000:06:00.0"})
				tr.WriteFile(fakesys.DevicePath("0000:06:00.0", "")+"/irq", "sixteen\n")
			},
			file: "0000:06:00.0/irq",
			want: []string{`"sixteen"`},
			is:   kernfs.ErrMalformed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := fakesys.New(t)
			tt.build(tr)
			inv, err := fsOf(tr).Read()
			perIRQ := false
			if err == nil {
				// A /proc/irq/N file degrades its IRQ, not the read.
				for _, q := range inv.IRQs {
					if q.Unreadable != "" {
						err, perIRQ = errors.New(q.Unreadable), true
					}
				}
			}
			if err == nil {
				t.Fatalf("no error; inventory %+v", inv)
			}
			msg := err.Error()
			file := tt.file
			if !strings.Contains(file, ":") { // a tree path, not a BDF suffix
				file = tr.Path(file)
			}
			if !strings.Contains(msg, file) {
				t.Errorf("error %q does not name %s", msg, file)
			}
			if strings.Count(msg, file) > 1 {
				t.Errorf("error %q names the file twice", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if tt.is != nil && !perIRQ && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", msg, tt.is)
			}
		})
	}
}

// BenchmarkRead is a fresh read of the scale host (fakesys.Scale*:
// 8192 IRQs, 256 CPUs), the resync's inventory.
func BenchmarkRead(b *testing.B) {
	benchmarkReader(b, true, nil)
}

// BenchmarkAffinities is a read of the scale host when the key holds, as
// after a CPU event: every device IRQ's smp_affinity_list and the key.
func BenchmarkAffinities(b *testing.B) {
	benchmarkReader(b, false, nil)
}

// BenchmarkRefresh is a read of the scale host after the key changed
// (an interface comes and goes): /proc/interrupts, the devices and the
// affinities, with every IRQ's and device's facts kept.
func BenchmarkRefresh(b *testing.B) {
	benchmarkReader(b, false, func(tr *fakesys.Tree, i int) {
		if i%2 == 0 {
			tr.Symlink("../../devices/virtual/net/dummy0", "sys/class/net/dummy0")
		} else {
			tr.Remove("sys/class/net/dummy0")
		}
	})
}

func benchmarkReader(b *testing.B, fresh bool, change func(tr *fakesys.Tree, i int)) {
	tr := fakesys.New(b)
	tr.AddScaleHost()
	r := NewReader(fsOf(tr))
	if _, _, err := r.Read(cpumask.Mask{}, DepthAll); err != nil {
		b.Fatal(err)
	}
	want := DepthAffinities
	switch {
	case fresh:
		want = DepthAll
	case change != nil:
		want = DepthInterrupts
	}
	var prepare func(int)
	if change != nil {
		prepare = func(i int) { change(tr, i) }
	}
	online := cpumask.New(tr.OnlineCPUs()...)
	least := DepthAffinities
	if fresh {
		least = DepthAll
	}
	syscount.Measure(b, prepare, func() {
		inv, depth, err := r.Read(online, least)
		if err != nil || depth != want {
			b.Fatalf("depth %v, error %v; want %v", depth, err, want)
		}
		if len(inv.IRQs) != fakesys.ScaleDevices*fakesys.ScalePerDev {
			b.Fatalf("%d IRQs", len(inv.IRQs))
		}
	})
}
