package napi

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// kthreaddPID is the parent of every kernel thread, which have pfKthread
// (PF_KTHREAD) in /proc/PID/stat's flags.
const (
	kthreaddPID = 2
	pfKthread   = 0x00200000
)

// procThread is a NAPI kthread as /proc shows it.
type procThread struct {
	pid  int
	comm string
}

// scanProc lists the kernel threads (never user tasks) named "napi/...".
func scanProc(r *kernfs.Reader, proc string) ([]procThread, error) {
	pids, err := candidates(r, proc)
	if err != nil {
		return nil, err
	}
	var out []procThread
	for _, pid := range pids {
		path := filepath.Join(proc, strconv.Itoa(pid), "stat")
		b, err := r.Read(path)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue
		}
		if err != nil {
			return nil, err
		}
		st, err := parseStat(path, b)
		if err != nil {
			continue // one task's stat says nothing of the others
		}
		if st.kthread() && len(st.comm) > len(commPrefix) &&
			st.comm[:len(commPrefix)] == commPrefix {
			out = append(out, procThread{pid: pid, comm: st.comm})
		}
	}
	return out, nil
}

// candidates returns kthreadd's children, or else every pid of proc.
func candidates(r *kernfs.Reader, proc string) ([]int, error) {
	k := strconv.Itoa(kthreaddPID)
	if b, err := r.Read(filepath.Join(proc, k, "task", k, "children")); err == nil {
		if pids, ok := parsePIDs(b); ok {
			return pids, nil
		}
	}
	var pids []int
	err := r.ReadDir(proc, func(name []byte) error {
		if pid, err := strconv.Atoi(string(name)); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return pids, nil
}

// parsePIDs parses a children file: pids separated by spaces.
func parsePIDs(b []byte) ([]int, bool) {
	var pids []int
	for _, f := range bytes.Fields(b) {
		pid, err := strconv.Atoi(string(f))
		if err != nil || pid <= 0 {
			return nil, false
		}
		pids = append(pids, pid)
	}
	return pids, true
}

// stat is the part of /proc/PID/stat scanProc needs.
type stat struct {
	comm  string
	ppid  int
	flags uint64
}

// kthread reports whether the task is a kernel thread.
func (st stat) kthread() bool { return st.ppid == kthreaddPID && st.flags&pfKthread != 0 }

// parseStat parses /proc/PID/stat, whose comm ends at the last ')'.
func parseStat(path string, b []byte) (stat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return stat{}, kernfs.Malformed(path, "no (comm) in %s", kernfs.Quote(b))
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < 7 {
		return stat{}, kernfs.Malformed(path, "%d fields after the comm, want at least 7: %s", len(f), kernfs.Quote(b))
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	flags, err2 := strconv.ParseUint(string(f[6]), 10, 64)
	if err1 != nil || err2 != nil || ppid < 0 {
		return stat{}, kernfs.Malformed(path, "ppid %s or flags %s is not a number", kernfs.Quote(f[1]), kernfs.Quote(f[6]))
	}
	return stat{comm: string(b[open+1 : end]), ppid: ppid, flags: flags}, nil
}

// byIface gives each NAPI kthread to the one interface of names its name
// fits (a cut name two fit goes to neither); only wanted are returned.
func byIface(threads []procThread, names []string, wanted map[string]bool) ([]Thread, []Unresolved) {
	var (
		out []Thread
		bad []Unresolved
	)
	for _, pt := range threads {
		var fits []string
		id := 0
		for _, n := range names {
			if i, ok := matchComm(pt.comm, n); ok {
				fits, id = append(fits, n), i
			}
		}
		switch {
		case len(fits) == 1 && wanted[fits[0]]:
			out = append(out, Thread{Iface: fits[0], PID: pt.pid, NAPIID: id, IRQ: -1, Queue: -1, Source: SourceProc})
		case len(fits) > 1 && slices.ContainsFunc(fits, func(n string) bool { return wanted[n] }):
			bad = append(bad, Unresolved{PID: pt.pid, Comm: pt.comm, Ifaces: fits})
		}
	}
	return out, bad
}

var (
	// ErrThreadGone: the thread exited; rediscover.
	ErrThreadGone = errors.New("thread gone")
	// ErrNotThatThread: the pid was reused by another task.
	ErrNotThatThread = errors.New("pid is no longer the NAPI kthread")
)

// CheckThread returns nil when pid is still a kernel thread named comm,
// else ErrThreadGone or ErrNotThatThread (the pid was reused).
func CheckThread(proc string, pid int, comm string) error {
	path := filepath.Join(proc, strconv.Itoa(pid), "stat")
	var r kernfs.Reader
	b, err := r.Read(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("read %s: %w: %w", path, ErrThreadGone, err)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	st, err := parseStat(path, b)
	if err != nil {
		return err
	}
	if st.comm != comm || !st.kthread() {
		return fmt.Errorf("%s: comm %q ppid %d flags %#x, want %q, kthreadd's child, PF_KTHREAD: %w",
			path, st.comm, st.ppid, st.flags, comm, ErrNotThatThread)
	}
	return nil
}
