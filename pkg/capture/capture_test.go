package capture_test

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/capture"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/netdev"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/topology"
)

// fakeNetdev answers queue-get and napi-get from fixed lists.
type fakeNetdev struct {
	queues []netdev.Queue
	napis  []netdev.NAPI
}

func (f fakeNetdev) Queues() ([]netdev.Queue, error) { return f.queues, nil }
func (f fakeNetdev) NAPIs() ([]netdev.NAPI, error)   { return f.napis, nil }

type fakeQueues load.QueueCounts

func (f fakeQueues) ReadQueues() load.QueueCounts { return load.QueueCounts(f) }

// read is what plan reads and plans, as text with root made ROOT.
func read(t *testing.T, roots machine.Roots, cfg *config.Config, root string) (snap, inv, plan string) {
	t.Helper()
	m, err := machine.Read(roots, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]cpumask.Mask{}
	for _, q := range m.Inventory.IRQs {
		if q.Movable() {
			want[q.Number] = cpumask.Mask{}
		}
	}
	m.Inventory = m.Inventory.WithEffective(inventory.FS{Proc: roots.Proc, Sys: roots.Sys}.ReadEffective(want))
	doc, err := json.Marshal(policy.Compute(m.Snapshot, m.Inventory, cfg, m.ToolBans(), policy.Memory{}, policy.Balancing{}).Doc())
	if err != nil {
		t.Fatal(err)
	}
	clean := func(s string) string { return strings.ReplaceAll(s, root, "ROOT") }
	return clean(fmt.Sprintf("%+v", *m.Snapshot)), clean(fmt.Sprintf("%+v", *m.Inventory)), clean(string(doc))
}

// roundTrip captures tree, opens the capture, and checks that numairqd
// reads and plans the replay as it does the tree; with touched, that
// the capture holds nothing the reads did not touch (it taps kernfs:
// not in parallel).
func roundTrip(t *testing.T, tree *fakesys.Tree, cfg *config.Config, nd inventory.Netdev, q load.QueueReader, touched bool) (*capture.Replay, []string) {
	t.Helper()
	src := capture.Source{Sys: tree.Sys(), Proc: tree.Proc(), Etc: tree.Path("etc"), Netdev: nd, Queues: q, Version: "test"}
	file := filepath.Join(t.TempDir(), "c.tar.gz")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	man, err := capture.Write(f, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if man.ReadErr != "" || man.Files == 0 || man.Format != capture.Format {
		t.Errorf("manifest %+v", man)
	}
	r, err := capture.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if (r.Roots.Netdev == nil) != (nd == nil) || (r.Queues == nil) != (q == nil) {
		t.Errorf("replay Netdev %v, Queues %v; captured with %v, %v", r.Roots.Netdev, r.Queues, nd, q)
	}
	s1, i1, p1 := read(t, machine.Roots{Sys: src.Sys, Proc: src.Proc, Etc: src.Etc, Netdev: nd}, cfg, tree.Root)
	dir := filepath.Dir(r.Roots.Sys)
	s2, i2, p2 := read(t, r.Roots, cfg, dir)
	for _, c := range []struct{ what, a, b string }{{"snapshot", s1, s2}, {"inventory", i1, i2}, {"plan", p1, p2}} {
		if c.a != c.b {
			t.Errorf("%s of the replay differs:\n%.3000s\nwant\n%.3000s", c.what, c.b, c.a)
		}
	}
	if q != nil && !strings.Contains(fmt.Sprint(r.Queues.ReadQueues()), fmt.Sprint(q.ReadQueues())) {
		t.Errorf("queue counters %v, want %v", r.Queues.ReadQueues(), q.ReadQueues())
	}
	if !touched {
		return r, entries(t, file, func(string) {})
	}
	ok := allowed(t, src, nd)
	return r, entries(t, file, func(name string) {
		host := map[string]string{"sys": src.Sys, "proc": src.Proc, "etc": src.Etc}
		top, rest, _ := strings.Cut(name, "/")
		if p := filepath.Join(host[top], rest); host[top] != "" && !ok[p] {
			t.Errorf("the capture holds %s, which the reads did not touch", name)
		}
	})
}

// tap collects every path a read touches.
type tap struct {
	mu    sync.Mutex
	paths map[string]bool
	dirs  map[string][]string
}

func (tp *tap) Record(a kernfs.Access) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tp.paths[a.Path] = true
	if a.Op == kernfs.OpDir {
		tp.dirs[a.Path] = a.Names
	}
}

// allowed are the paths a capture of src may hold: those the reads
// touched, their real paths, the ancestors of both, and listed names.
func allowed(t *testing.T, src capture.Source, nd inventory.Netdev) map[string]bool {
	t.Helper()
	tp := &tap{paths: map[string]bool{}, dirs: map[string][]string{}}
	untap, ok := kernfs.Tap(tp)
	if !ok {
		t.Fatal("kernfs already tapped")
	}
	cfg := config.Default()
	honor := true
	cfg.HonorDefaultAffinity = &honor
	m, err := machine.Read(machine.Roots{Sys: src.Sys, Proc: src.Proc, Etc: src.Etc, Netdev: nd}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]cpumask.Mask{}
	for _, q := range m.Inventory.IRQs {
		want[q.Number] = cpumask.Mask{}
	}
	inventory.FS{Proc: src.Proc, Sys: src.Sys}.ReadEffective(want)
	topology.NewFS(src.Sys).ReadDetail()
	load.FS{Proc: src.Proc}.ReadStat()
	untap()
	out := map[string]bool{}
	add := func(p string) {
		for ; p != "/" && !out[p]; p = filepath.Dir(p) {
			out[p] = true
		}
	}
	for p := range tp.paths {
		add(p)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			add(real)
		}
		for q := p; q != "/"; q = filepath.Dir(q) {
			if real, err := filepath.EvalSymlinks(q); err == nil {
				add(real)
			}
			if dir, err := filepath.EvalSymlinks(filepath.Dir(q)); err == nil {
				add(filepath.Join(dir, filepath.Base(q))) // the link itself
			}
		}
	}
	for d, names := range tp.dirs {
		real, _ := filepath.EvalSymlinks(d)
		for _, n := range names {
			add(filepath.Join(real, n))
		}
	}
	return out
}

// entries lists the archive's names, calling check with each under
// sys/, proc/ or etc/.
func entries(t *testing.T, file string, check func(name string)) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if strings.Contains(h.Name, "/") {
			check(h.Name)
		}
	}
}

// TestRoundTripFleet: every fleet host but the scale one reads and plans
// the same from its capture as from its tree; the first holds nothing
// else.
func TestRoundTripFleet(t *testing.T) {
	for i, sh := range fakesys.Shapes() {
		if sh.Name == "scale-256" {
			continue
		}
		if i == 0 {
			tree := fakesys.New(t)
			sh.Build(tree)
			roundTrip(t, tree, config.Default(), nil, nil, true)
			continue
		}
		t.Run(sh.Name, func(t *testing.T) {
			t.Parallel()
			tree := fakesys.New(t)
			sh.Build(tree)
			cfg := config.Default()
			if sh.Banned != "" {
				var err error
				if cfg, err = config.Parse("test", fmt.Appendf(nil, "banned_cpus: %q\n", sh.Banned)); err != nil {
					t.Fatal(err)
				}
			}
			roundTrip(t, tree, cfg, nil, nil, false)
		})
	}
}

// TestRoundTripNAPI: the lab guest's NIC with threaded NAPI, netlink
// answers, per-queue counters, an irqbalance ban file and a process
// that is not a NAPI kthread, listed with /proc when kthreadd's
// children are not: replayed the same, and the process not captured.
func TestRoundTripNAPI(t *testing.T) {
	for _, children := range []bool{true, false} {
		t.Run(fmt.Sprint("children ", children), func(t *testing.T) {
			tree := fakesys.NewQEMUGuestNIC(t, true)
			threads, rx, _ := fakesys.VirtioNAPIThreads("eth0", 4, 8193, 500, cpumask.New(0, 1, 2, 3, 4, 5, 6, 7))
			tree.AddNAPIThreads("eth0", threads...)
			tree.WriteFile("proc/1234/stat", "1234 (sshd) S 1 0 0 0 -1 4194560 0 0 0 0 0 4 0 0 20 0 1 0 100 0 0\n")
			tree.WriteFile("proc/1234/status", "Name:\tsshd\nCpus_allowed_list:\t0-7\n")
			tree.WriteFile("etc/sysconfig/irqbalance", "IRQBALANCE_BANNED_CPULIST=7\n")
			tree.WriteFile("proc/irq/default_smp_affinity", "7f\n")
			if !children {
				tree.Remove("proc/2/task/2/children")
			}
			var nd fakeNetdev
			for k := range 4 {
				nd.queues = append(nd.queues, netdev.Queue{Ifindex: 2, Type: netdev.QueueRX, ID: k, NAPI: 8193 + k},
					netdev.Queue{Ifindex: 2, Type: netdev.QueueTX, ID: k, NAPI: 8193 + k})
				nd.napis = append(nd.napis, netdev.NAPI{Ifindex: 2, ID: 8193 + k, IRQ: 25 + 2*k, PID: rx[k]})
			}
			q := fakeQueues{Sources: map[string]string{"eth0": load.SourceQStats}, Counts: []load.QueueCount{{Interface: "eth0", Queue: 1, Packets: 42}}}
			r, names := roundTrip(t, tree, config.Default(), nd, q, true)
			for _, n := range names {
				if strings.HasPrefix(n, "proc/1234") || strings.Contains(n, "sshd") {
					t.Errorf("the capture holds %s, a process that is no NAPI kthread", n)
				}
			}
			if !strings.Contains(strings.Join(names, " "), fmt.Sprintf("proc/%d/status", rx[0])) {
				t.Errorf("the capture lacks NAPI kthread %d: %v", rx[0], names)
			}
			if r.Roots.Etc == "" {
				t.Error("the capture has no etc")
			}
		})
	}
}

// failingNetdev fails every request with err.
type failingNetdev struct{ err error }

func (f failingNetdev) Queues() ([]netdev.Queue, error) { return nil, f.err }
func (f failingNetdev) NAPIs() ([]netdev.NAPI, error)   { return nil, f.err }

// TestRoundTripNetlinkErrors: a kernel without the netdev family replays
// as one (netdev.Unavailable), another error as that error; both are in
// the manifest.
func TestRoundTripNetlinkErrors(t *testing.T) {
	for _, err := range []error{fmt.Errorf("netdev queue-get: %w", syscall.EOPNOTSUPP), errors.New("netdev queue-get: boom")} {
		t.Run(err.Error(), func(t *testing.T) {
			r, _ := roundTrip(t, fakesys.NewQEMUGuestNIC(t, true), config.Default(), failingNetdev{err}, nil, false)
			_, got := r.Roots.Netdev.Queues()
			if got == nil || !strings.HasPrefix(got.Error(), err.Error()) || netdev.Unavailable(got) != netdev.Unavailable(err) {
				t.Errorf("replayed %v, want %v", got, err)
			}
			if want := (capture.Missing{Path: "netlink queue-get", Why: err.Error()}); !slices.Contains(r.Manifest.Missing, want) {
				t.Errorf("manifest missing %v, want %v in it", r.Manifest.Missing, want)
			}
		})
	}
}

// TestSameBytes: with a Time, a tree captured twice is the same bytes.
func TestSameBytes(t *testing.T) {
	tree := fakesys.NewQEMUGuestNIC(t, true)
	var out [2]strings.Builder
	for i := range out {
		if _, err := capture.Write(&out[i], capture.Source{Sys: tree.Sys(), Proc: tree.Proc(), Time: time.Unix(1e9, 0)}); err != nil {
			t.Fatal(err)
		}
	}
	if out[0].String() != out[1].String() || out[0].Len() == 0 {
		t.Errorf("two captures of one tree differ: %d and %d bytes", out[0].Len(), out[1].Len())
	}
}

// TestConfiguredEnvFile: the config's own irqbalance_env_file in /etc is
// captured and replayed from the capture, never from this host.
func TestConfiguredEnvFile(t *testing.T) {
	tree := fakesys.NewQEMUGuestNIC(t, true)
	tree.WriteFile("etc/numairqd/irq.env", "IRQBALANCE_BANNED_CPULIST=5\n")
	cfgFile := tree.Path("numairqd.yaml")
	if err := os.WriteFile(cfgFile, []byte("irqbalance_env_file: /etc/numairqd/irq.env\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "c.tar.gz")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capture.Write(f, capture.Source{Sys: tree.Sys(), Proc: tree.Proc(), Etc: tree.Path("etc"), Config: cfgFile}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, err := capture.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cfg, err := config.Load(r.Config)
	if err != nil {
		t.Fatal(err)
	}
	m, err := machine.Read(r.Roots, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(r.Roots.Etc, "numairqd/irq.env"); m.Bans.EnvFile != want || m.Bans.Env.String() != "5" {
		t.Errorf("replayed bans: %s from %q, want 5 from %q", m.Bans.Env, m.Bans.EnvFile, want)
	}
}

// TestIsolatedPartitionsReplayed: the cgroup v2 root's
// cpuset.cpus.isolated is in the capture, and the replay bans the same
// CPUs, by the same source, as the machine.
func TestIsolatedPartitionsReplayed(t *testing.T) {
	tree := fakesys.NewQEMUGuestNIC(t, true)
	tree.WriteFileMode("sys/fs/cgroup/cpuset.cpus.isolated", "6-7\n", 0o444)
	r, names := roundTrip(t, tree, config.Default(), nil, nil, true)
	if !slices.Contains(names, "sys/fs/cgroup/cpuset.cpus.isolated") {
		t.Errorf("the capture lacks sys/fs/cgroup/cpuset.cpus.isolated: %v", names)
	}
	m, err := machine.Read(r.Roots, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	tb := m.ToolBans()
	if m.Bans.Partitions.String() != "6-7" || len(tb) != 1 || tb[0].Source != policy.BanIsolatedPartitions {
		t.Errorf("replayed partitions %s, tool bans %+v; want 6-7 by isolated_partitions", m.Bans.Partitions, tb)
	}
}
