package napi

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/netdev"
	"github.com/numairqd/numairqd/pkg/nl"
)

// kthreadStat is a /proc/PID/stat line of a child of kthreadd, with
// the flags Debian's 6.1 guest showed for its NAPI threads.
func kthreadStat(pid int, comm string) string {
	return fmt.Sprintf("%d (%s) S 2 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 612 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 17 2 0 0 0 0 0 0 0 0 0 0 0 0 0\n", pid, comm)
}

// writeTree builds a fixture tree under a temporary root: files maps a
// path to its content, links a path to a symbolic link's target.
func writeTree(t *testing.T, files, links map[string]string) FS {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, target := range links {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	return FS{Proc: filepath.Join(root, "proc"), Sys: filepath.Join(root, "sys")}
}

// labTree is the guest of test/e2e/napi_test.go after `echo 1 >
// /sys/class/net/eth0/threaded` (virtio-net, 8 queue pairs, Linux
// 6.1): the kthreads come in dev->napi_list order, sq[7], rq[7], ...,
// sq[0], rq[0], and rq[k] has id 8193+k. Around them: init, kthreadd,
// a user process that calls itself like a NAPI thread, two interfaces
// whose cut thread name is the same, one whose cut took the id, a
// process gone while listed, /proc's non-numeric entries and
// kthreadd's children file.
func labTree(t *testing.T) FS {
	files := map[string]string{
		"proc/1/stat":                         "1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0\n",
		"proc/2/stat":                         kthreadStat(2, "kthreadd"),
		"proc/30/stat":                        kthreadStat(30, "kworker/0:1-events"),
		"proc/400/stat":                       "400 (napi/eth0-8201) S 1 400 400 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0\n",
		"proc/401/stat":                       kthreadStat(401, "napi/enp129s0f0"),
		"proc/402/stat":                       kthreadStat(402, "napi/enp1s0-819"),
		"proc/self/stat":                      "not a pid directory",
		"proc/uptime":                         "12.00 40.00\n",
		"sys/class/net/lo/ifindex":            "1\n",
		"sys/class/net/eth0/ifindex":          "2\n",
		"sys/class/net/enp129s0f0np0/ifindex": "3\n",
		"sys/class/net/enp129s0f0np1/ifindex": "4\n",
		"sys/class/net/enp1s0/ifindex":        "5\n",
	}
	children := "30 401 402 403 "
	for k := 0; k < 8; k++ {
		tx, rx := 360-2*k-1, 360-2*k
		files[fmt.Sprintf("proc/%d/stat", tx)] = kthreadStat(tx, "napi/eth0-0")
		files[fmt.Sprintf("proc/%d/stat", rx)] = kthreadStat(rx, fmt.Sprintf("napi/eth0-%d", 8193+k))
		children += fmt.Sprintf("%d %d ", tx, rx)
	}
	// kthreadd's children as CONFIG_PROC_CHILDREN lists them, with a
	// trailing space; 400 is a user process, not among them.
	files["proc/2/task/2/children"] = children
	virtio := "../../../../../bus/virtio/drivers/virtio_net"
	fsys := writeTree(t, files, map[string]string{
		"sys/class/net/eth0/device/driver":          virtio,
		"sys/class/net/enp1s0/device/driver":        virtio,
		"sys/class/net/enp129s0f0np0/device/driver": "../../../../bus/pci/drivers/mlx5_core",
	})
	// A process that exited between the listing and the read.
	if err := os.Mkdir(filepath.Join(fsys.Proc, "403"), 0o755); err != nil {
		t.Fatal(err)
	}
	return fsys
}

func TestFindVirtioNet61(t *testing.T) {
	res, err := Find([]string{"eth0"}, Options{FS: labTree(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Threads) != 16 || len(res.Unresolved) != 0 {
		t.Fatalf("got %d threads, unresolved %v; want 16, none: %+v", len(res.Threads), res.Unresolved, res.Threads)
	}
	// Sorted by kind, then queue: rx before tx.
	rx, tx := res.Threads[:8], res.Threads[8:]
	for k := range 8 {
		want := Thread{Iface: "eth0", PID: 360 - 2*k, NAPIID: 8193 + k, IRQ: -1, Queue: k, Kind: KindRX, Source: SourceProc}
		if rx[k] != want {
			t.Errorf("rx %d: got %+v, want %+v", k, rx[k], want)
		}
		want = Thread{Iface: "eth0", PID: 359 - 2*k, NAPIID: 0, IRQ: -1, Queue: k, Kind: KindTX, Source: SourceProc}
		if tx[k] != want {
			t.Errorf("tx %d: got %+v, want %+v", k, tx[k], want)
		}
	}
}

func TestFindCutNames(t *testing.T) {
	fsys := labTree(t)
	res, err := Find([]string{"enp129s0f0np0", "enp1s0", "wlan9"}, Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	// enp1s0's thread lost the end of its id: no id, so no queue.
	want := Thread{Iface: "enp1s0", PID: 402, NAPIID: -1, IRQ: -1, Queue: -1, Source: SourceProc}
	if len(res.Threads) != 1 || res.Threads[0] != want {
		t.Errorf("threads %+v, want only %+v", res.Threads, want)
	}
	// "napi/enp129s0f0" fits both enp129s0f0np0 and enp129s0f0np1.
	if len(res.Unresolved) != 1 || res.Unresolved[0].PID != 401 ||
		strings.Join(res.Unresolved[0].Ifaces, ",") != "enp129s0f0np0,enp129s0f0np1" {
		t.Errorf("unresolved %+v, want pid 401 fitting enp129s0f0np0 and enp129s0f0np1", res.Unresolved)
	}
}

// A stat that cannot be parsed (a task exiting mid-read, a kernel's
// odd line) is that task's alone: the other threads are still found.
func TestFindBadStatSkipped(t *testing.T) {
	for name, content := range map[string]string{
		"no comm":    "77 napi S 2 0\n",
		"few fields": "77 (napi/eth0-1) S 2 0 0\n",
		"bad ppid":   "77 (napi/eth0-1) S x 0 0 0 -1 2129984 0\n",
		"bad flags":  "77 (napi/eth0-1) S 2 0 0 0 -1 -5 0\n",
		"empty":      "",
	} {
		fsys := labTree(t)
		writeFile(t, filepath.Join(fsys.Proc, "77", "stat"), content)
		writeFile(t, filepath.Join(fsys.Proc, "2", "task", "2", "children"), "77 "+readFile(t, filepath.Join(fsys.Proc, "2", "task", "2", "children")))
		res, err := Find([]string{"eth0"}, Options{FS: fsys})
		if err != nil || len(res.Threads) != 16 {
			t.Errorf("%s: got %d threads, err %v; want eth0's 16", name, len(res.Threads), err)
		}
	}
}

// Only kthreadd's children are read while /proc/2/task/2/children can
// be; without it (no CONFIG_PROC_CHILDREN), or when it is not a list of
// pids, every pid of /proc is. Pid 500 passes every check but is not
// listed, so it tells which walk ran.
func TestFindCandidates(t *testing.T) {
	children := func(fsys FS) string { return filepath.Join(fsys.Proc, "2", "task", "2", "children") }
	for name, tc := range map[string]struct {
		edit func(t *testing.T, fsys FS)
		want int
	}{
		"children":      {func(*testing.T, FS) {}, 16},
		"no children":   {func(t *testing.T, fsys FS) { removeFile(t, children(fsys)) }, 17},
		"bad children":  {func(t *testing.T, fsys FS) { writeFile(t, children(fsys), "30 x 401\n") }, 17},
		"children dir":  {func(t *testing.T, fsys FS) { removeFile(t, children(fsys)); mkdir(t, children(fsys)) }, 17},
		"empty, listed": {func(t *testing.T, fsys FS) { writeFile(t, children(fsys), "") }, 0},
	} {
		fsys := labTree(t)
		writeFile(t, filepath.Join(fsys.Proc, "500", "stat"), kthreadStat(500, "napi/eth0-9999"))
		tc.edit(t, fsys)
		res, err := Find([]string{"eth0"}, Options{FS: fsys})
		if err != nil || len(res.Threads) != tc.want {
			t.Errorf("%s: got %d threads, err %v; want %d", name, len(res.Threads), err, tc.want)
		}
		if tc.want == 17 && !slices.ContainsFunc(res.Threads, func(th Thread) bool { return th.PID == 500 }) {
			t.Errorf("%s: the full walk missed pid 500: %+v", name, res.Threads)
		}
	}
}

// addNetlink dumps napi-get once for all the wanted interfaces and
// matches its NAPIs by ifindex: an interface the dump does not list
// (removed, or down) keeps /proc's threads; another interface's NAPIs
// and unthreaded ones (no pid) are left out.
func TestAddNetlink(t *testing.T) {
	fsys := labTree(t)
	calls := 0
	dump := func() ([]netdev.NAPI, error) {
		calls++
		return []netdev.NAPI{
			{Ifindex: 5, ID: 9000, IRQ: 40, PID: 700},
			{Ifindex: 5, ID: 9001, IRQ: 41, PID: -1},
			{Ifindex: 3, ID: 9100, IRQ: -1, PID: 800},
		}, nil
	}
	var r kernfs.Reader
	netDir := filepath.Join(fsys.Sys, "class", "net")
	proc := Thread{Iface: "eth0", PID: 300, NAPIID: 8193, Queue: -1, Source: SourceProc}
	ifaces := []string{"enp1s0", "eth0", "lo"}
	threads, err := addNetlink(&r, netDir, ifaces, map[string]bool{"eth0": true, "enp1s0": true}, []Thread{proc}, dump)
	if err != nil || calls != 1 {
		t.Fatalf("err %v, %d dumps; want one dump", err, calls)
	}
	want := []Thread{proc, {Iface: "enp1s0", PID: 700, NAPIID: 9000, IRQ: 40, Queue: -1, Source: SourceNetlink}}
	if !slices.Equal(threads, want) {
		t.Errorf("threads %+v, want %+v", threads, want)
	}
	if _, err := addNetlink(&r, netDir, ifaces, map[string]bool{}, nil, dump); err != nil || calls != 1 {
		t.Errorf("no interface wanted: err %v, %d dumps; want none", err, calls)
	}
}

// A kernel without napi-get leaves /proc's threads; any other dump
// error fails.
func TestAddNetlinkErrors(t *testing.T) {
	fsys := labTree(t)
	var r kernfs.Reader
	netDir := filepath.Join(fsys.Sys, "class", "net")
	proc := []Thread{{Iface: "eth0", PID: 300, Queue: -1, Source: SourceProc}}
	wanted := map[string]bool{"eth0": true}
	noFamily := fmt.Errorf("netdev napi-get: %w", nl.ErrNoFamily)
	threads, err := addNetlink(&r, netDir, []string{"eth0"}, wanted, proc,
		func() ([]netdev.NAPI, error) { return nil, noFamily })
	if err != nil || !slices.Equal(threads, proc) {
		t.Errorf("no family: %+v, err %v; want /proc's threads", threads, err)
	}
	_, err = addNetlink(&r, netDir, []string{"eth0"}, wanted, proc,
		func() ([]netdev.NAPI, error) { return nil, fmt.Errorf("dump: %w", syscall.EPERM) })
	if !errors.Is(err, syscall.EPERM) {
		t.Errorf("EPERM: err %v, want it", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func removeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestFindNoSysClassNet(t *testing.T) {
	fsys := writeTree(t, map[string]string{"proc/1/stat": "1 (init) S 0 1 1 0 -1 4194560 0\n"}, nil)
	if _, err := Find([]string{"eth0"}, Options{FS: fsys}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v, want a missing /sys/class/net", err)
	}
}

func TestStatCommWithParens(t *testing.T) {
	st, err := parseStat("stat", []byte("9 (a) (b) c) S 2 0 0 0 -1 2129984 0\n"))
	if err != nil || st.comm != "a) (b) c" || st.ppid != 2 || st.flags != 2129984 {
		t.Errorf("got %+v, %v", st, err)
	}
}
