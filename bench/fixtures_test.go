//go:build e2e || fixtures

package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/bench/measure"
	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// fleetDefaultShapes are the fakesys fleet shapes the fixture part
// measures unless BENCH_SHAPES names others ("all": every shape), one
// for each situation a placer can get wrong: the bug report's NPS2 host
// and the 8192-IRQ scale host, bans with two NICs a socket, SNC nodes
// inside one L3, 127 queues on a one-CCD node, eight sockets with
// distances that are no tree, a NIC on a CPU-less node, SMT4 with
// sparse node ids, more queues than vCPUs, and devices without a node.
var fleetDefaultShapes = []string{
	"nps2-4x16-mlx5", "scale-256", "2s-32-two-nics", "spr-2s-snc4", "epyc-2p-l3numa",
	"clx-8s-glueless", "cxl-2s-expander", "power9-ac922", "azure-mana-8vcpu", "kvm-virtio-4vcpu",
}

// fleetTimeout bounds each placer's run on one shape.
const fleetTimeout = 10 * time.Minute

// TestFixtures places the IRQs of fleet shapes (fakesys.Shapes) with
// irqbalance 1.9.2 and with numairqd, each on its own copy of the
// shape's tree, and writes what they did to $BENCH_OUT/fixtures.json
// for bench/report (the drivers' spread is computed there, from the
// tree's topology, by bench/measure).
//
// irqbalance runs as user nobody in a private mount namespace with an
// empty network namespace, over which the copy's sys, proc/interrupts,
// proc/stat and proc/irq are bind-mounted, and only once markers the
// copy holds are visible at /sys and /proc/irq: even a bind that did
// not take leaves it unable to write the host's root-owned
// /proc/irq/N/smp_affinity. numairqd runs only as `numairqd plan`,
// which reads. Needs root (for the mounts) and BENCH_IRQBALANCE, the
// path of an irqbalance binary extracted from Debian's package
// (bench/run.sh fixtures sets it).
func TestFixtures(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: irqbalance runs in a mount namespace of its own")
	}
	irqb := os.Getenv("BENCH_IRQBALANCE")
	if irqb == "" {
		t.Skip("BENCH_IRQBALANCE is not set: run bench/run.sh fixtures")
	}
	start := time.Now()
	out := os.Getenv("BENCH_OUT")
	if out == "" {
		out = t.TempDir()
	}
	logs := filepath.Join(out, "fixtures")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	shapes := fleetShapes(t, os.Getenv("BENCH_SHAPES"))
	work := fleetWorkDir(t)
	numairqd := fleetBuildNumairqd(t, work)
	fleetFenceHolds(t, work)
	run := measure.FleetRun{Meta: fleetMeta(irqb)}
	guard := fleetHostAffinities(t)
	defer func() {
		if after := fleetHostAffinities(t); !maps.Equal(guard, after) {
			t.Errorf("the host's /proc/irq/*/smp_affinity_list changed during the run: before %d IRQs, after %d; check what else ran", len(guard), len(after))
		}
		run.Meta.WallS = time.Since(start).Seconds()
		b, err := json.MarshalIndent(run, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(out, "fixtures.json")
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes) after %v", dst, len(b), time.Since(start).Round(time.Second))
	}()
	for _, sh := range shapes {
		t.Run(sh.Name, func(t *testing.T) {
			built := time.Now()
			tr := fakesys.New(t)
			sh.Build(tr)
			if err := fleetKernelFiles(tr.Root); err != nil {
				t.Fatal(err)
			}
			rec, err := fleetRecord(tr.Root)
			if err != nil {
				t.Fatal(err)
			}
			rec.Name, rec.What, rec.Banned = sh.Name, sh.What, sh.Banned
			rec.BuildS = time.Since(built).Seconds()
			dir := filepath.Join(work, sh.Name)
			rec.Runs = append(rec.Runs,
				fleetIrqbalance(t, irqb, tr.Root, dir, logs, rec),
				fleetNumairqd(t, numairqd, tr.Root, dir, logs, rec))
			for _, r := range rec.Runs {
				if r.Err != "" {
					t.Errorf("%s: %s", r.Placer, r.Err)
				}
			}
			run.Shapes = append(run.Shapes, rec)
		})
	}
}

// fleetShapes picks the shapes named in list (comma-separated; "all"
// for every shape; "" for fleetDefaultShapes), failing on a name the
// corpus does not have.
func fleetShapes(t *testing.T, list string) []fakesys.Shape {
	all := fakesys.Shapes()
	if list == "all" {
		return all
	}
	names := fleetDefaultShapes
	if list != "" {
		names = strings.Split(list, ",")
	}
	var out []fakesys.Shape
	for _, n := range names {
		i := slices.IndexFunc(all, func(s fakesys.Shape) bool { return s.Name == strings.TrimSpace(n) })
		if i < 0 {
			var have []string
			for _, s := range all {
				have = append(have, s.Name)
			}
			t.Fatalf("no fleet shape %q; fakesys.Shapes() has %s", n, strings.Join(have, ", "))
		}
		out = append(out, all[i])
	}
	return out
}

// fleetWorkDir makes the directory that holds the placers' copies of
// the trees and the numairqd binary: mode 0755, so that user nobody
// can reach them.
func fleetWorkDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "numairqd-fixtures-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fleetBuildNumairqd builds cmd/numairqd of this tree into dir.
func fleetBuildNumairqd(t *testing.T, dir string) string {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "numairqd")
	cmd := exec.Command("go", "build", "-trimpath", "-o", dst, "./cmd/numairqd")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/numairqd: %v\n%s", err, out)
	}
	return dst
}

// fleetMeta describes the run: this tree's commit, the toolchain, the
// host's kernel and the version irqbalance prints.
func fleetMeta(irqb string) measure.FleetMeta {
	line := func(name string, args ...string) string {
		out, _ := exec.Command(name, args...).Output()
		s, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return s
	}
	commit := line("git", "rev-parse", "--short", "HEAD")
	if out, _ := exec.Command("git", "status", "--porcelain").Output(); len(out) > 0 {
		commit += " (with uncommitted changes)"
	}
	cmd := os.Getenv("BENCH_COMMAND")
	if cmd == "" {
		cmd = "go test -tags fixtures -run TestFixtures ./bench/"
	}
	return measure.FleetMeta{
		Date:       time.Now().UTC().Format("2006-01-02 15:04 MST"),
		Command:    cmd,
		Commit:     commit,
		Go:         runtime.Version(),
		HostKernel: line("uname", "-r"),
		// --version only prints: parse_command_line exits before main
		// reads or writes anything.
		Irqbalance: line("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", irqb, "--version"),
	}
}

// fleetHostAffinities reads this host's own smp_affinity_list files:
// the run must leave them as they were.
func fleetHostAffinities(t *testing.T) map[string]string {
	files, err := filepath.Glob("/proc/irq/*/smp_affinity_list")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			out[f] = string(b)
		}
	}
	return out
}

// fleetKernelFiles adds to the tree at root the files a kernel has
// that fakesys leaves out and irqbalance 1.9.2 reads (cputree.c,
// numa.c, classify.c, procinterrupts.c), derived from the ones it
// writes, so that irqbalance sees the machine numairqd sees:
//   - the bitmap form of each CPU list (topology/core_siblings,
//     thread_siblings, core_cpus, package_cpus, die_cpus,
//     cache/indexK/shared_cpu_map, node/nodeN/cpumap);
//   - cache/index1 (L1i) and index2 (L2) shared by a core's SMT
//     siblings, as on x86, beside a cache/index3: irqbalance's cache
//     level is the deepest index up to 2 that exists from index1 on;
//   - the cpuN/nodeM link that gives irqbalance a CPU's node;
//   - each PCI device's vendor, device, subsystem_vendor and
//     subsystem_device (irqbalance leaves an IRQ of a device without
//     them unbalanced), local_cpus and local_cpulist (its node's CPUs,
//     all online CPUs for node -1);
//   - proc/stat with a line per online CPU and no load.
//
// Files already present are kept.
func fleetKernelFiles(root string) error {
	sys := filepath.Join(root, "sys/devices/system")
	online, err := fleetList(filepath.Join(sys, "cpu/online"))
	if err != nil {
		return err
	}
	nbits := online.Last() + 1
	if p, err := fleetList(filepath.Join(sys, "cpu/possible")); err == nil {
		nbits = max(nbits, p.Last()+1)
	}
	hexOf := func(list, dst string) error {
		if _, err := os.Stat(dst); err == nil {
			return nil
		}
		m, err := fleetList(list)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, []byte(m.Hex(nbits)+"\n"), 0o444)
	}
	nodeOf := map[int]int{}
	nodeDirs, _ := filepath.Glob(filepath.Join(sys, "node/node[0-9]*"))
	for _, nd := range nodeDirs {
		id, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(nd), "node"))
		if err != nil {
			continue
		}
		cpus, err := fleetList(filepath.Join(nd, "cpulist"))
		if err != nil {
			return err
		}
		for c := range cpus.All() {
			nodeOf[c] = id
		}
		if err := hexOf(filepath.Join(nd, "cpulist"), filepath.Join(nd, "cpumap")); err != nil {
			return err
		}
	}
	for c := range online.All() {
		dir := filepath.Join(sys, "cpu", "cpu"+strconv.Itoa(c))
		topo := filepath.Join(dir, "topology")
		for _, f := range []string{"core_siblings", "thread_siblings", "core_cpus", "package_cpus", "die_cpus"} {
			if _, err := os.Stat(filepath.Join(topo, f+"_list")); err == nil {
				if err := hexOf(filepath.Join(topo, f+"_list"), filepath.Join(topo, f)); err != nil {
					return err
				}
			}
		}
		cache := filepath.Join(dir, "cache")
		if _, err := os.Stat(filepath.Join(cache, "index3")); err == nil {
			core := filepath.Join(topo, "core_cpus_list")
			if _, err := os.Stat(core); err != nil {
				core = filepath.Join(topo, "thread_siblings_list")
			}
			sib, err := os.ReadFile(core)
			if err != nil {
				sib = []byte(strconv.Itoa(c) + "\n")
			}
			for _, idx := range []struct{ name, level, typ string }{{"index1", "1", "Instruction"}, {"index2", "2", "Unified"}} {
				d := filepath.Join(cache, idx.name)
				if _, err := os.Stat(d); err == nil {
					continue
				}
				if err := os.MkdirAll(d, 0o755); err != nil {
					return err
				}
				for f, v := range map[string]string{"level": idx.level, "type": idx.typ, "shared_cpu_list": strings.TrimSpace(string(sib))} {
					if err := os.WriteFile(filepath.Join(d, f), []byte(v+"\n"), 0o444); err != nil {
						return err
					}
				}
			}
		}
		lists, _ := filepath.Glob(filepath.Join(cache, "index*/shared_cpu_list"))
		for _, l := range lists {
			if err := hexOf(l, filepath.Join(filepath.Dir(l), "shared_cpu_map")); err != nil {
				return err
			}
		}
		if n, ok := nodeOf[c]; ok {
			link := filepath.Join(dir, "node"+strconv.Itoa(n))
			if _, err := os.Lstat(link); errors.Is(err, fs.ErrNotExist) {
				if err := os.Symlink("../../node/node"+strconv.Itoa(n), link); err != nil {
					return err
				}
			}
		}
	}
	devs, _ := filepath.Glob(filepath.Join(root, "sys/bus/pci/devices/*"))
	for _, d := range devs {
		driver := ""
		if l, err := os.Readlink(filepath.Join(d, "driver")); err == nil {
			driver = filepath.Base(l)
		}
		ids := fleetPCIIDs[driver]
		if ids == [2]string{} {
			ids = [2]string{"0x1b36", "0x0001"}
		}
		local := online
		if n, err := fleetInt(filepath.Join(d, "numa_node")); err == nil && n >= 0 {
			if m, err := fleetList(filepath.Join(sys, "node", "node"+strconv.Itoa(n), "cpulist")); err == nil {
				local = m
			}
		}
		for f, v := range map[string]string{
			"vendor": ids[0], "device": ids[1], "subsystem_vendor": ids[0], "subsystem_device": ids[1],
			"local_cpus": local.Hex(nbits), "local_cpulist": local.String(),
		} {
			p := filepath.Join(d, f)
			if _, err := os.Stat(p); err == nil {
				continue
			}
			if err := os.WriteFile(p, []byte(v+"\n"), 0o444); err != nil {
				return err
			}
		}
	}
	stat := filepath.Join(root, "proc/stat")
	if _, err := os.Stat(stat); errors.Is(err, fs.ErrNotExist) {
		var b strings.Builder
		fmt.Fprintf(&b, "cpu  0 0 0 %d 0 0 0 0 0 0\n", 100000*online.Weight())
		for c := range online.All() {
			fmt.Fprintf(&b, "cpu%d 0 0 0 100000 0 0 0 0 0 0\n", c)
		}
		b.WriteString("intr 0\nctxt 0\nbtime 0\nprocesses 1\nprocs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n")
		if err := os.WriteFile(stat, []byte(b.String()), 0o444); err != nil {
			return err
		}
	}
	return nil
}

// fleetPCIIDs are the vendor and device ids fleetKernelFiles gives a
// device by its driver: a real part of each (none is one of
// irqbalance's quirks, which are PLX and Cavium bridges), so that its
// PCI class decides irqbalance's class for the IRQs.
var fleetPCIIDs = map[string][2]string{
	"mlx5_core":  {"0x15b3", "0x101d"}, // ConnectX-6 Dx
	"mlx4_core":  {"0x15b3", "0x1007"}, // ConnectX-3 Pro
	"ice":        {"0x8086", "0x1593"}, // E810-C
	"i40e":       {"0x8086", "0x1572"}, // X710
	"ixgbe":      {"0x8086", "0x10fb"}, // 82599
	"bnxt_en":    {"0x14e4", "0x16d7"}, // BCM57414
	"ena":        {"0x1d0f", "0xec20"},
	"mana":       {"0x1414", "0x00ba"},
	"nvme":       {"0x144d", "0xa80a"}, // PM9A3
	"virtio-pci": {"0x1af4", "0x1041"}, // modern virtio-net
}

// fleetList reads a CPU list file.
func fleetList(path string) (cpumask.Mask, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return cpumask.Mask{}, err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return cpumask.Mask{}, nil
	}
	m, err := cpumask.ParseList(s)
	if err != nil {
		return cpumask.Mask{}, fmt.Errorf("read %s: %w", path, err)
	}
	return m, nil
}

// fleetInt reads a file holding one decimal number.
func fleetInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// fleetRecord reads the tree at root as built: its machine, and every
// PCI device with MSI IRQs with their names, starting lists and
// whether they are managed (smp_affinity without a write bit).
func fleetRecord(root string) (measure.FleetShape, error) {
	var s measure.FleetShape
	sys := filepath.Join(root, "sys/devices/system")
	online, err := fleetList(filepath.Join(sys, "cpu/online"))
	if err != nil {
		return s, err
	}
	s.Machine.Online = online.CPUs()
	for _, f := range []struct {
		name string
		dst  *string
	}{{"isolated", &s.Machine.Isolated}, {"nohz_full", &s.Machine.NohzFull}} {
		if b, err := os.ReadFile(filepath.Join(sys, "cpu", f.name)); err == nil {
			*f.dst = strings.TrimSpace(string(b))
		}
	}
	nodes, err := fleetList(filepath.Join(sys, "node/online"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s, err
	}
	for n := range nodes.All() {
		dir := filepath.Join(sys, "node", "node"+strconv.Itoa(n))
		cpus, err := fleetList(filepath.Join(dir, "cpulist"))
		if err != nil {
			return s, err
		}
		b, err := os.ReadFile(filepath.Join(dir, "distance"))
		if err != nil {
			return s, err
		}
		node := guestinfo.Node{ID: n, CPUs: cpus.CPUs()}
		for _, f := range strings.Fields(string(b)) {
			d, err := strconv.Atoi(f)
			if err != nil {
				return s, fmt.Errorf("read %s/distance: %q: %w", dir, f, err)
			}
			node.Distance = append(node.Distance, d)
		}
		s.Machine.Nodes = append(s.Machine.Nodes, node)
	}
	for c := range online.All() {
		dir := filepath.Join(sys, "cpu", "cpu"+strconv.Itoa(c))
		cpu := measure.FleetCPU{ID: c, Core: c, LLC: -1}
		for _, f := range []string{"topology/core_cpus_list", "topology/thread_siblings_list"} {
			if m, err := fleetList(filepath.Join(dir, f)); err == nil && !m.IsEmpty() {
				cpu.Core = m.First()
				break
			}
		}
		if m, err := fleetList(filepath.Join(dir, "cache/index3/shared_cpu_list")); err == nil && !m.IsEmpty() {
			cpu.LLC = m.First()
		}
		s.Machine.CPUs = append(s.Machine.CPUs, cpu)
	}
	b, err := os.ReadFile(filepath.Join(root, "proc/interrupts"))
	if err != nil {
		return s, err
	}
	ints, err := inventory.ParseInterrupts(bytes.NewReader(b))
	if err != nil {
		return s, fmt.Errorf("read %s/proc/interrupts: %w", root, err)
	}
	names := map[int]string{}
	for _, r := range ints.Rows {
		names[r.IRQ] = strings.Join(r.Actions, ", ")
	}
	devs, _ := filepath.Glob(filepath.Join(root, "sys/bus/pci/devices/*"))
	for _, d := range devs {
		msi, err := os.ReadDir(filepath.Join(d, "msi_irqs"))
		if err != nil || len(msi) == 0 {
			continue
		}
		dev := measure.FleetDevice{PCI: filepath.Base(d), Node: -1}
		if l, err := os.Readlink(filepath.Join(d, "driver")); err == nil {
			dev.Driver = filepath.Base(l)
		}
		if n, err := fleetInt(filepath.Join(d, "numa_node")); err == nil {
			dev.Node = n
		}
		for _, e := range msi {
			n, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			irq := measure.FleetIRQ{IRQ: n, Name: names[n]}
			dir := filepath.Join(root, "proc/irq", e.Name())
			if st, err := os.Stat(filepath.Join(dir, "smp_affinity")); err == nil {
				irq.Managed = st.Mode().Perm()&0o222 == 0
			}
			if m, err := fleetList(filepath.Join(dir, "smp_affinity_list")); err == nil {
				irq.Start = m.String()
			}
			dev.IRQs = append(dev.IRQs, irq)
		}
		slices.SortFunc(dev.IRQs, func(a, b measure.FleetIRQ) int { return a.IRQ - b.IRQ })
		s.Devices = append(s.Devices, dev)
	}
	return s, nil
}

// fleetCopy copies the tree at src to dst (cp -a: modes, links).
func fleetCopy(t *testing.T, src, dst string) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", src, dst, err, out)
	}
	if err := os.Chmod(dst, 0o755); err != nil {
		t.Fatal(err)
	}
}

// fleetNobody is user nobody's uid and group nogroup's gid.
func fleetNobody(t *testing.T) (int, int) {
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	g, err := user.LookupGroup("nogroup")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(g.Gid)
	return uid, gid
}

// fleetIrqbalanceScript runs in the mount namespace unshare made: it
// binds the copy over the paths irqbalance reads, checks that each
// bind took (the markers, and the files themselves), and only then
// starts irqbalance as nobody.
const fleetIrqbalanceScript = `set -eu
tree=$1 token=$2 irqbalance=$3
mount --bind "$tree/sys" /sys
mount --bind "$tree/proc/interrupts" /proc/interrupts
mount --bind "$tree/proc/stat" /proc/stat
mount --bind "$tree/proc/irq" /proc/irq
for m in /proc/irq/MARKER /sys/MARKER; do
	if [ "$(cat "$m" 2>/dev/null)" != "$token" ]; then
		echo "fixtures: $m is not the fixture's: a bind did not take; irqbalance not started" >&2
		exit 97
	fi
done
for f in interrupts stat; do
	if ! cmp -s "/proc/$f" "$tree/proc/$f"; then
		echo "fixtures: /proc/$f is not the fixture's: a bind did not take; irqbalance not started" >&2
		exit 97
	fi
done
unset INVOCATION_ID
exec setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$irqbalance" --oneshot --foreground --debug --interval=1
`

// fleetFenced is the command that runs bin (irqbalance) with env on
// the copy at tree through fleetIrqbalanceScript, in a private mount
// namespace and an empty network namespace; token is the copy's
// marker.
func fleetFenced(ctx context.Context, tree, token, bin string, env []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "unshare", "-m", "-n", "--propagation", "private", "--",
		"sh", "-c", fleetIrqbalanceScript, "fixtures", tree, token, bin)
	cmd.Env = env
	return cmd
}

// fleetFenceHolds checks the fence before any irqbalance runs: on a
// copy whose marker is not the token the script is given (as if a bind
// had not taken), the script must stop with status 97 before it starts
// the program, here one that would leave a file behind.
func fleetFenceHolds(t *testing.T, work string) {
	tr := fakesys.New(t)
	tr.AddMachine(fakesys.QEMUGuest())
	tr.AddQEMUGuestDevices()
	if err := fleetKernelFiles(tr.Root); err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(work, "fence", "tree")
	fleetCopy(t, tr.Root, tree)
	for _, m := range []string{"proc/irq/MARKER", "sys/MARKER"} {
		if err := os.WriteFile(filepath.Join(tree, m), []byte("the copy's\n"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	ran := filepath.Join(work, "fence", "ran")
	prog := filepath.Join(work, "fence", "prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\ntouch "+ran+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := fleetFenced(context.Background(), tree, "not the copy's", prog, nil).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 97 || !strings.Contains(string(out), "a bind did not take") {
		t.Fatalf("the fence did not stop on a wrong marker: %v\n%s", err, out)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the fence started the program on a wrong marker")
	}
}

// fleetIrqbalance runs irqbalance --oneshot on a copy of the tree at
// src (see TestFixtures for how it is fenced in) and reads back every
// device IRQ's smp_affinity, the only file it writes.
func fleetIrqbalance(t *testing.T, irqb, src, dir, logs string, rec measure.FleetShape) measure.FleetPlacer {
	r := measure.FleetPlacer{Placer: "irqbalance", Affinity: map[int]string{}}
	tree := filepath.Join(dir, "irqbalance")
	fleetCopy(t, src, tree)
	token := make([]byte, 16)
	if _, err := rand.Read(token); err != nil {
		t.Fatal(err)
	}
	tok := hex.EncodeToString(token)
	for _, m := range []string{"proc/irq/MARKER", "sys/MARKER"} {
		if err := os.WriteFile(filepath.Join(tree, m), []byte(tok+"\n"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	uid, gid := fleetNobody(t)
	files, _ := filepath.Glob(filepath.Join(tree, "proc/irq/*/smp_affinity*"))
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.Mode().Perm()&0o200 != 0 {
			if err := os.Lchown(f, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	env := []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	if rec.Banned != "" {
		env = append(env, "IRQBALANCE_BANNED_CPULIST="+rec.Banned)
	}
	ctx, cancel := context.WithTimeout(context.Background(), fleetTimeout)
	defer cancel()
	cmd := fleetFenced(ctx, tree, tok, irqb, env)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	r.Seconds = time.Since(start).Seconds()
	r.Exit = cmd.ProcessState.ExitCode()
	r.LogTail = fleetTail(out, 25)
	if werr := os.WriteFile(filepath.Join(logs, rec.Name+"-irqbalance.log"), out, 0o644); werr != nil {
		t.Error(werr)
	}
	if err != nil {
		r.Err = fmt.Sprintf("irqbalance: %v (log: %s)", err, strings.TrimSpace(fleetTail(out, 3)))
		return r
	}
	for _, d := range rec.Devices {
		for _, irq := range d.IRQs {
			b, err := os.ReadFile(filepath.Join(tree, "proc/irq", strconv.Itoa(irq.IRQ), "smp_affinity"))
			if err != nil {
				continue
			}
			m, err := cpumask.ParseHex(string(b))
			if err != nil {
				r.Err = fmt.Sprintf("IRQ %d: smp_affinity after irqbalance: %v", irq.IRQ, err)
				return r
			}
			r.Affinity[irq.IRQ] = m.String()
		}
	}
	return r
}

// fleetNumairqd runs `numairqd plan --format json` as nobody, in an
// empty network namespace (nothing of the host's to ask netlink
// about), on a copy of the tree at src, with the shape's banned CPUs
// and no irqbalance environment file, and takes each IRQ's planned
// CPUs from its output.
func fleetNumairqd(t *testing.T, bin, src, dir, logs string, rec measure.FleetShape) measure.FleetPlacer {
	r := measure.FleetPlacer{Placer: "numairqd", Affinity: map[int]string{}}
	tree := filepath.Join(dir, "numairqd")
	fleetCopy(t, src, tree)
	etc := filepath.Join(dir, "etc")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "numairqd.yaml")
	conf := fmt.Sprintf("banned_cpus: %q\nirqbalance_env_file: \"\"\nhonor_default_smp_affinity: false\n", rec.Banned)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), fleetTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "-n", "--",
		"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
		bin, "plan", "--sysfs", filepath.Join(tree, "sys"), "--procfs", filepath.Join(tree, "proc"),
		"--config", cfg, "--etc", etc, "--format", "json")
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r.Seconds = time.Since(start).Seconds()
	r.Exit = cmd.ProcessState.ExitCode()
	r.LogTail = fleetTail(stderr.Bytes(), 25)
	for name, b := range map[string][]byte{"-numairqd.json": stdout.Bytes(), "-numairqd.log": stderr.Bytes()} {
		if werr := os.WriteFile(filepath.Join(logs, rec.Name+name), b, 0o644); werr != nil {
			t.Error(werr)
		}
	}
	if err != nil {
		r.Err = fmt.Sprintf("numairqd plan: %v (stderr: %s)", err, strings.TrimSpace(fleetTail(stderr.Bytes(), 3)))
		return r
	}
	var doc struct {
		Devices []struct {
			IRQs []struct {
				IRQ     int    `json:"irq"`
				Current string `json:"current"`
				Planned string `json:"planned"`
			} `json:"irqs"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		r.Err = fmt.Sprintf("numairqd plan output: %v", err)
		return r
	}
	planned := map[int]string{}
	for _, d := range doc.Devices {
		for _, irq := range d.IRQs {
			if irq.Planned != "" {
				planned[irq.IRQ] = irq.Planned
			}
		}
	}
	for _, d := range rec.Devices {
		for _, irq := range d.IRQs {
			if p, ok := planned[irq.IRQ]; ok {
				r.Affinity[irq.IRQ] = p
				continue
			}
			if !irq.Managed {
				r.NotPlanned++
			}
			r.Affinity[irq.IRQ] = irq.Start
		}
	}
	return r
}

// fleetTail is the last n lines of out.
func fleetTail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
