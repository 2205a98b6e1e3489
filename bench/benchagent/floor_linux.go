package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numairqd/numairqd/bench/measure"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
)

// floor is the yardstick for the cost of a daemon's round after a CPU
// event, the "physical floor": for every cpu online/offline
// uevent, and nothing more, it re-reads the CPU and node files, reads
// the smp_affinity_list of each planned IRQ once and writes the ones
// that differ from the plan. The plans are numairqd's own (`numairqd
// plan --format json`, one per online set, made before the floor
// starts), so the floor writes what numairqd's plan writes and spends
// nothing on planning; with no plan for the online CPUs found, an
// IRQ's target is its list at start ∩ online (every online CPU if
// that is empty). Each file is opened, read or written once and closed.
// No coalescing, no /proc/interrupts. A first round, before "ready",
// puts the plan of the online CPUs in place, as numairqd's startup
// round does. It stops on SIGTERM or SIGINT, or after maxRun, and
// prints a measure.FloorSummary.
func floor(maxRun time.Duration, planFiles []string) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_KOBJECT_UEVENT)
	if err != nil {
		return fmt.Errorf("uevent socket: %w", err)
	}
	// Group 1: the kernel's uevents.
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: 1}); err != nil {
		return fmt.Errorf("bind uevent socket: %w", err)
	}
	buf := make([]byte, 4096)
	plans, planned, err := loadPlans(planFiles)
	if err != nil {
		return err
	}
	irqs := planned
	if len(plans) == 0 {
		irqs = deviceIRQs()
	}
	f := &floorState{plans: plans, wanted: map[int]cpumask.Mask{}}
	for _, irq := range irqs {
		if m, ok := readMask(buf, affinityPath(irq)); ok {
			f.wanted[irq] = m
		}
	}
	var mu sync.Mutex // held by a round, so that the summary is whole
	f.round(buf, &measure.FloorSummary{})
	sum := measure.FloorSummary{IRQs: len(f.wanted)}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		stop := "max"
		select {
		case <-sig:
			stop = "signal"
		case <-time.After(maxRun):
		}
		mu.Lock()
		sum.Stop = stop
		b, _ := json.Marshal(sum)
		fmt.Printf("%s\n", b)
		os.Exit(0)
	}()
	fmt.Printf("ready: %d IRQs, %d plans\n", len(f.wanted), len(plans))
	msg := make([]byte, 64<<10)
	for {
		n, _, err := unix.Recvfrom(fd, msg, 0)
		if err == unix.EINTR || err == unix.ENOBUFS {
			continue
		}
		if err != nil {
			return fmt.Errorf("recv uevent: %w", err)
		}
		mu.Lock()
		if cpuEvent(msg[:n]) {
			sum.Rounds++
			f.round(buf, &sum)
		} else {
			sum.Ignored++
		}
		mu.Unlock()
	}
}

// floorState is what the floor keeps: numairqd's plans by allowed CPU
// list, and each IRQ's list at start.
type floorState struct {
	plans  map[string]map[int]cpumask.Mask
	wanted map[int]cpumask.Mask
}

// loadPlans reads `numairqd plan --format json` documents: per allowed
// CPU list, the planned mask of each IRQ numairqd would place; and all
// those IRQs, ascending.
func loadPlans(files []string) (map[string]map[int]cpumask.Mask, []int, error) {
	plans := map[string]map[int]cpumask.Mask{}
	seen := map[int]bool{}
	var irqs []int
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, nil, err
		}
		var doc policy.Doc
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		targets := map[int]cpumask.Mask{}
		for _, d := range doc.Devices {
			for _, q := range d.IRQs {
				if q.Planned.IsEmpty() {
					continue
				}
				targets[q.Number] = q.Planned
				if !seen[q.Number] {
					seen[q.Number] = true
					irqs = append(irqs, q.Number)
				}
			}
		}
		plans[doc.Allowed.String()] = targets
	}
	slices.Sort(irqs)
	return plans, irqs, nil
}

// round is one round of the floor.
func (f *floorState) round(buf []byte, sum *measure.FloorSummary) {
	read := func(path string) ([]byte, bool) {
		sum.Reads++
		return readOnce(buf, path)
	}
	online, _ := read("/sys/devices/system/cpu/online")
	cpus, _ := cpumask.ParseList(string(bytes.TrimSpace(online)))
	nodeList, _ := read("/sys/devices/system/node/online")
	nodes, _ := cpumask.ParseList(string(bytes.TrimSpace(nodeList)))
	for n := range nodes.All() {
		read(fmt.Sprintf("/sys/devices/system/node/node%d/cpulist", n))
		read(fmt.Sprintf("/sys/devices/system/node/node%d/distance", n))
	}
	plan, havePlan := f.plans[cpus.String()]
	for irq, want := range f.wanted {
		sum.Reads++
		cur, ok := readMask(buf, affinityPath(irq))
		if !ok {
			continue
		}
		target := want.And(cpus)
		if havePlan {
			if target, ok = plan[irq]; !ok {
				continue // this plan leaves it alone
			}
		} else if target.IsEmpty() {
			target = cpus
		}
		if cur.Equal(target) {
			continue
		}
		if writeOnce(affinityPath(irq), target.String()) {
			sum.Writes++
		} else {
			// The kernel refuses it (a managed IRQ): never again.
			sum.WriteErrors++
			delete(f.wanted, irq)
		}
	}
}

// cpuEvent reports whether a kernel uevent ("ACTION@DEVPATH\0KEY=VALUE\0...")
// is a CPU going online or offline.
func cpuEvent(msg []byte) bool {
	var action, subsystem string
	for _, kv := range bytes.Split(msg, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("ACTION=")); ok {
			action = string(v)
		} else if v, ok := bytes.CutPrefix(kv, []byte("SUBSYSTEM=")); ok {
			subsystem = string(v)
		}
	}
	return subsystem == "cpu" && (action == "online" || action == "offline")
}

// deviceIRQs lists the PCI devices' IRQs once: the entries of each
// device's msi_irqs, or its legacy irq if it has none.
func deviceIRQs() []int {
	seen := map[int]bool{}
	var out []int
	add := func(s string) {
		if n, err := strconv.Atoi(s); err == nil && n > 0 && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	devs, _ := filepath.Glob("/sys/bus/pci/devices/*")
	for _, d := range devs {
		if msi, err := os.ReadDir(filepath.Join(d, "msi_irqs")); err == nil && len(msi) > 0 {
			for _, e := range msi {
				add(e.Name())
			}
			continue
		}
		if b, err := os.ReadFile(filepath.Join(d, "irq")); err == nil {
			add(string(bytes.TrimSpace(b)))
		}
	}
	return out
}

func affinityPath(irq int) string { return "/proc/irq/" + strconv.Itoa(irq) + "/smp_affinity_list" }

// readOnce opens path, reads it with one read(2) into buf and closes it.
func readOnce(buf []byte, path string) ([]byte, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	n, err := unix.Read(fd, buf)
	unix.Close(fd)
	if err != nil || n < 0 {
		return nil, false
	}
	return buf[:n], true
}

func readMask(buf []byte, path string) (cpumask.Mask, bool) {
	b, ok := readOnce(buf, path)
	if !ok {
		return cpumask.Mask{}, false
	}
	m, err := cpumask.ParseList(string(bytes.TrimSpace(b)))
	return m, err == nil
}

// writeOnce opens path, writes s with one write(2) and closes it.
func writeOnce(path, s string) bool {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	_, err = unix.Write(fd, []byte(s))
	return unix.Close(fd) == nil && err == nil
}
