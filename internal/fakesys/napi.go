package fakesys

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// NAPIThread is a NAPI kthread for AddNAPIThreads.
type NAPIThread struct {
	PID     int
	Comm    string // "napi/eth0-8193", as the kernel cuts it (15 bytes)
	Allowed cpumask.Mask
}

// AddNAPIThreads turns threaded NAPI on for interface ifname (already
// added) and adds its kthreads under proc as the kernel shows them:
// /proc/PID/stat with kthreadd (2) as parent and PF_KTHREAD in its
// flags, and /proc/PID/status with Name and Cpus_allowed_list.
func (t *Tree) AddNAPIThreads(ifname string, threads ...NAPIThread) {
	t.tb.Helper()
	t.WriteFile("sys/class/net/"+ifname+"/threaded", "1\n")
	for _, th := range threads {
		t.WriteNAPIThread(th)
	}
}

// WriteNAPIThread writes (or rewrites) one kthread's stat and status,
// and lists it among kthreadd's children (/proc/2/task/2/children),
// where pkg/napi looks first.
func (t *Tree) WriteNAPIThread(th NAPIThread) {
	t.tb.Helper()
	t.addKthreaddChild(th.PID)
	dir := "proc/" + strconv.Itoa(th.PID) + "/"
	// flags 0x208040: PF_KTHREAD | PF_NOFREEZE | PF_FORKNOEXEC.
	t.WriteFile(dir+"stat", fmt.Sprintf("%d (%s) S 2 0 0 0 -1 2129984 0 0 0 0 0 4 0 0 20 0 1 0 100 0 0\n", th.PID, th.Comm))
	t.WriteFile(dir+"status", fmt.Sprintf("Name:\t%s\nState:\tS (sleeping)\nPid:\t%d\nPPid:\t2\nCpus_allowed:\t%s\nCpus_allowed_list:\t%s\n",
		th.Comm, th.PID, th.Allowed.Hex(0), th.Allowed))
}

// kthreaddChildrenFile is where CONFIG_PROC_CHILDREN lists kthreadd's
// children: pids, each followed by a space.
const kthreaddChildrenFile = "proc/2/task/2/children"

// addKthreaddChild lists pid in kthreaddChildrenFile once.
func (t *Tree) addKthreaddChild(pid int) {
	t.tb.Helper()
	data, err := os.ReadFile(t.Path(kthreaddChildrenFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.tb.Fatal(err)
	}
	p := strconv.Itoa(pid)
	if slices.Contains(strings.Fields(string(data)), p) {
		return
	}
	t.WriteFile(kthreaddChildrenFile, string(data)+p+" ")
}

// NAPIThreadAllowed reads back Cpus_allowed_list of thread pid.
func (t *Tree) NAPIThreadAllowed(pid int) cpumask.Mask {
	t.tb.Helper()
	data, err := os.ReadFile(t.Path("proc/" + strconv.Itoa(pid) + "/status"))
	if err != nil {
		t.tb.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			m, err := cpumask.ParseList(strings.TrimSpace(v))
			if err != nil {
				t.tb.Fatal(err)
			}
			return m
		}
	}
	t.tb.Fatalf("no Cpus_allowed_list for pid %d", pid)
	return cpumask.Mask{}
}

// VirtioNAPIThreads are the kthreads writing threaded = 1 creates for a
// virtio-net interface ifname with pairs queue pairs whose first RX
// NAPI id is firstID, as 6.1 does (pkg/napi's doc): walking napi_list,
// sq[pairs-1], rq[pairs-1], ..., sq[0], rq[0], with pids from firstPID
// up; TX threads are "napi/IF-0", RX queue k's "napi/IF-<firstID+k>".
// Every thread is allowed on allowed. It returns them in pid order and
// the pid of RX and TX queue k at rx[k] and tx[k].
func VirtioNAPIThreads(ifname string, pairs, firstID, firstPID int, allowed cpumask.Mask) (threads []NAPIThread, rx, tx []int) {
	rx, tx = make([]int, pairs), make([]int, pairs)
	pid := firstPID
	for k := pairs - 1; k >= 0; k-- {
		comm := func(id int) string { return cut15("napi/" + ifname + "-" + strconv.Itoa(id)) }
		threads = append(threads, NAPIThread{PID: pid, Comm: comm(0), Allowed: allowed},
			NAPIThread{PID: pid + 1, Comm: comm(firstID + k), Allowed: allowed})
		tx[k], rx[k] = pid, pid+1
		pid += 2
	}
	return threads, rx, tx
}

// cut15 cuts a kthread name to what the kernel keeps (TASK_COMM_LEN-1).
func cut15(s string) string { return s[:min(len(s), 15)] }

// PinThread is sched_setaffinity on a fixture: it rewrites
// Cpus_allowed_list (and Cpus_allowed) in proc/PID/status, and fails
// with ESRCH when the thread's status is gone, as the kernel would.
func PinThread(proc string, pid int, m cpumask.Mask) error {
	path := filepath.Join(proc, strconv.Itoa(pid), "status")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sched_setaffinity pid %d: %w", pid, syscall.ESRCH)
	}
	if err != nil {
		return err
	}
	var out strings.Builder
	for line := range strings.Lines(string(data)) {
		switch {
		case strings.HasPrefix(line, "Cpus_allowed_list:"):
			line = "Cpus_allowed_list:\t" + m.String() + "\n"
		case strings.HasPrefix(line, "Cpus_allowed:"):
			line = "Cpus_allowed:\t" + m.Hex(0) + "\n"
		}
		out.WriteString(line)
	}
	return os.WriteFile(path, []byte(out.String()), 0o644)
}
