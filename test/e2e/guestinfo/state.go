package guestinfo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// FS is the root under which proc and sys are mounted ("/" in the guest).
type FS struct{ Root string }

// State is one snapshot of the guest, as the agent prints it.
type State struct {
	Kernel   string  `json:"kernel"`
	UptimeS  float64 `json:"uptime_s"`
	Online   []int   `json:"online"`
	Possible []int   `json:"possible"`
	// Isolated and NohzFull are the raw sysfs text; a 6.1 kernel built
	// with NO_HZ_FULL but booted without nohz_full= prints "(null)".
	Isolated string      `json:"isolated"`
	NohzFull string      `json:"nohz_full"`
	Nodes    []Node      `json:"nodes"`
	IRQs     []IRQ       `json:"irqs"`
	PCI      []PCIDevice `json:"pci"`
	Net      []NetDevice `json:"net"`
	// Errors lists files that could not be read; the snapshot is still
	// printed so that a scenario sees as much as the guest has.
	Errors []string `json:"errors,omitempty"`
}

// Node is /sys/devices/system/node/nodeN.
type Node struct {
	ID       int   `json:"id"`
	CPUs     []int `json:"cpus"`
	Distance []int `json:"distance"`
}

// IRQ is one line of /proc/interrupts joined with /proc/irq/N.
type IRQ struct {
	Number int `json:"irq"`
	// Actions are the handler names (the subdirectories of /proc/irq/N),
	// e.g. "virtio0-input.0" or "nvme0q1".
	Actions []string `json:"actions"`
	// Chip is the text between the counts and the action names in
	// /proc/interrupts, e.g. "PCI-MSIX-0000:41:00.0 1-edge".
	Chip      string `json:"chip"`
	Count     uint64 `json:"count"`
	Affinity  string `json:"smp_affinity_list"`
	Effective string `json:"effective_affinity_list"`
	Hint      string `json:"affinity_hint"`
	Node      int    `json:"node"`
}

// PCIDevice is /sys/bus/pci/devices/<address>.
type PCIDevice struct {
	Address  string `json:"address"`
	Vendor   string `json:"vendor"`
	Device   string `json:"device"`
	Class    string `json:"class"`
	NUMANode int    `json:"numa_node"`
	Driver   string `json:"driver,omitempty"`
	MSIIRQs  []int  `json:"msi_irqs,omitempty"`
	// Children are virtioN and nvmeN names found under the device.
	Children []string `json:"children,omitempty"`
}

// NetDevice is /sys/class/net/<name> for devices backed by PCI.
type NetDevice struct {
	Name     string `json:"name"`
	PCI      string `json:"pci"`
	RxQueues int    `json:"rx_queues"`
	TxQueues int    `json:"tx_queues"`
	// XPS is queues/tx-K/xps_cpus for K = 0..TxQueues-1, the kernel's
	// hex mask ("" where the file is absent or unreadable: a
	// single-queue device answers ENOENT).
	XPS []string `json:"xps_cpus,omitempty"`
}

// Read takes a snapshot. Files that cannot be read are listed in
// State.Errors rather than failing the whole snapshot.
func (fs FS) Read() State {
	var s State
	r := reader{fs: fs, s: &s}
	s.Kernel = r.str("proc/sys/kernel/osrelease")
	if f := strings.Fields(r.str("proc/uptime")); len(f) > 0 {
		s.UptimeS, _ = strconv.ParseFloat(f[0], 64)
	}
	s.Online = r.list("sys/devices/system/cpu/online")
	s.Possible = r.list("sys/devices/system/cpu/possible")
	s.Isolated = r.optional("sys/devices/system/cpu/isolated")
	s.NohzFull = r.optional("sys/devices/system/cpu/nohz_full")
	s.Nodes = r.nodes()
	s.IRQs = r.irqs()
	s.PCI = r.pci()
	s.Net = r.net()
	return s
}

// IRQsNamed returns the IRQs that have an action whose name satisfies match.
func (s State) IRQsNamed(match func(string) bool) []IRQ {
	var out []IRQ
	for _, irq := range s.IRQs {
		for _, a := range irq.Actions {
			if match(a) {
				out = append(out, irq)
				break
			}
		}
	}
	return out
}

// PCIDevice returns the device at address, if present.
func (s State) PCIDevice(address string) (PCIDevice, bool) {
	for _, d := range s.PCI {
		if d.Address == address {
			return d, true
		}
	}
	return PCIDevice{}, false
}

type reader struct {
	fs FS
	s  *State
}

func (r reader) path(rel string) string { return filepath.Join(r.fs.Root, rel) }

func (r reader) fail(err error) { r.s.Errors = append(r.s.Errors, err.Error()) }

func (r reader) str(rel string) string {
	b, err := os.ReadFile(r.path(rel))
	if err != nil {
		r.fail(err)
		return ""
	}
	return strings.TrimSpace(string(b))
}

// optional reads a file that not every kernel or IRQ has.
func (r reader) optional(rel string) string {
	b, err := os.ReadFile(r.path(rel))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			r.fail(err)
		}
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (r reader) list(rel string) []int {
	s := r.str(rel)
	m, err := cpumask.ParseList(s)
	if err != nil {
		r.fail(fmt.Errorf("read %s: %w", r.path(rel), err))
		return nil
	}
	return m.CPUs()
}

func (r reader) int(rel string) int {
	s := r.str(rel)
	n, err := strconv.Atoi(s)
	if err != nil && s != "" {
		r.fail(fmt.Errorf("read %s: %q: %w", r.path(rel), s, err))
	}
	return n
}

func (r reader) nodes() []Node {
	var out []Node
	for _, id := range r.list("sys/devices/system/node/online") {
		dir := fmt.Sprintf("sys/devices/system/node/node%d/", id)
		n := Node{ID: id, CPUs: r.list(dir + "cpulist")}
		for _, f := range strings.Fields(r.str(dir + "distance")) {
			d, err := strconv.Atoi(f)
			if err != nil {
				r.fail(fmt.Errorf("read %s: %q: %w", r.path(dir+"distance"), f, err))
			}
			n.Distance = append(n.Distance, d)
		}
		out = append(out, n)
	}
	return out
}

// irqs parses /proc/interrupts: a header of CPUn columns, then
// "N: count... chip hwirq actions" lines; the non-numeric lines (NMI,
// LOC, ...) are skipped.
func (r reader) irqs() []IRQ {
	b, err := os.ReadFile(r.path("proc/interrupts"))
	if err != nil {
		r.fail(err)
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	if !sc.Scan() {
		return nil
	}
	ncpu := len(strings.Fields(sc.Text()))
	var out []IRQ
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		num, err := strconv.Atoi(strings.TrimSuffix(f[0], ":"))
		if err != nil {
			continue
		}
		irq := IRQ{Number: num, Node: -1}
		rest := f[1:]
		for i := 0; i < ncpu && len(rest) > 0; i++ {
			c, err := strconv.ParseUint(rest[0], 10, 64)
			if err != nil {
				break
			}
			irq.Count += c
			rest = rest[1:]
		}
		dir := fmt.Sprintf("proc/irq/%d/", num)
		irq.Actions = r.actions(dir)
		// The chip text is what precedes the first action name.
		chip := rest
		if len(irq.Actions) > 0 {
			for i, w := range rest {
				if strings.TrimSuffix(w, ",") == irq.Actions[0] {
					chip = rest[:i]
					break
				}
			}
		}
		irq.Chip = strings.Join(chip, " ")
		irq.Affinity = r.optional(dir + "smp_affinity_list")
		irq.Effective = r.optional(dir + "effective_affinity_list")
		irq.Hint = r.optional(dir + "affinity_hint")
		if s := r.optional(dir + "node"); s != "" {
			irq.Node, _ = strconv.Atoi(s)
		}
		out = append(out, irq)
	}
	return out
}

func (r reader) actions(dir string) []string {
	ents, err := os.ReadDir(r.path(dir))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			r.fail(err)
		}
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

func (r reader) pci() []PCIDevice {
	ents, err := os.ReadDir(r.path("sys/bus/pci/devices"))
	if err != nil {
		r.fail(err)
		return nil
	}
	var out []PCIDevice
	for _, e := range ents {
		dir := "sys/bus/pci/devices/" + e.Name() + "/"
		d := PCIDevice{
			Address:  e.Name(),
			Vendor:   r.str(dir + "vendor"),
			Device:   r.str(dir + "device"),
			Class:    r.str(dir + "class"),
			NUMANode: r.int(dir + "numa_node"),
		}
		if l, err := os.Readlink(r.path(dir + "driver")); err == nil {
			d.Driver = filepath.Base(l)
		}
		if msi, err := os.ReadDir(r.path(dir + "msi_irqs")); err == nil {
			for _, m := range msi {
				if n, err := strconv.Atoi(m.Name()); err == nil {
					d.MSIIRQs = append(d.MSIIRQs, n)
				}
			}
			sort.Ints(d.MSIIRQs)
		}
		children, _ := os.ReadDir(r.path(dir))
		for _, c := range children {
			if strings.HasPrefix(c.Name(), "virtio") && c.Name() != "virtio" {
				d.Children = append(d.Children, c.Name())
			}
		}
		if nv, err := os.ReadDir(r.path(dir + "nvme")); err == nil {
			for _, c := range nv {
				d.Children = append(d.Children, c.Name())
			}
		}
		out = append(out, d)
	}
	return out
}

func (r reader) net() []NetDevice {
	ents, err := os.ReadDir(r.path("sys/class/net"))
	if err != nil {
		r.fail(err)
		return nil
	}
	var out []NetDevice
	for _, e := range ents {
		dir := r.path("sys/class/net/" + e.Name())
		dev, err := filepath.EvalSymlinks(filepath.Join(dir, "device"))
		if err != nil {
			continue // virtual device (lo)
		}
		// virtio-net's device link points at virtioN; its parent is the
		// PCI function.
		pci := filepath.Base(dev)
		if strings.HasPrefix(pci, "virtio") {
			pci = filepath.Base(filepath.Dir(dev))
		}
		n := NetDevice{Name: e.Name(), PCI: pci}
		qs, _ := os.ReadDir(filepath.Join(dir, "queues"))
		for _, q := range qs {
			switch {
			case strings.HasPrefix(q.Name(), "rx-"):
				n.RxQueues++
			case strings.HasPrefix(q.Name(), "tx-"):
				n.TxQueues++
			}
		}
		for k := range n.TxQueues {
			n.XPS = append(n.XPS, r.optional(fmt.Sprintf("sys/class/net/%s/queues/tx-%d/xps_cpus", e.Name(), k)))
		}
		out = append(out, n)
	}
	return out
}
