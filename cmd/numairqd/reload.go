package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/numairqd/numairqd/pkg/daemon"
)

// defaultReloadStatus is where the daemon records each reload's outcome,
// so that `numairqd reload` (and systemctl reload) returns once the new
// config is applied and fails when it was rejected.
const defaultReloadStatus = "/run/numairqd/reload-status"

// recordReload writes the reload status file: one line, the
// CLOCK_MONOTONIC microsecond at which the reload began reading the
// config, then "ok" or "rejected: " and the reason's first line. It
// renames a temporary file, so that a reader never sees half a line.
func recordReload(path string, startedUsec uint64, rerr error) error {
	line := strconv.FormatUint(startedUsec, 10) + " ok\n"
	if rerr != nil {
		reason, _, _ := strings.Cut(rerr.Error(), "\n")
		line = strconv.FormatUint(startedUsec, 10) + " rejected: " + reason + "\n"
	}
	err := os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = os.WriteFile(path+".tmp", []byte(line), 0o644)
	}
	if err == nil {
		err = os.Rename(path+".tmp", path)
	}
	if err != nil {
		return fmt.Errorf("reload status for numairqd reload: %w", err)
	}
	return nil
}

// readReloadStatus parses the status file: when the last reload began,
// and why it was rejected ("" when it was applied).
func readReloadStatus(path string) (startedUsec uint64, rejected string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, "", err
	}
	line := strings.TrimSuffix(string(b), "\n")
	usec, rest, _ := strings.Cut(line, " ")
	n, err := strconv.ParseUint(usec, 10, 64)
	if err == nil && rest == "ok" {
		return n, "", nil
	}
	if reason, ok := strings.CutPrefix(rest, "rejected: "); err == nil && ok {
		return n, reason, nil
	}
	return 0, "", fmt.Errorf("%s: %q is not a reload status (want MICROSECONDS ok|rejected: REASON)", path, line)
}

// reloadPoll is how often `numairqd reload` reads the status file.
const reloadPoll = 20 * time.Millisecond

func runReload(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("reload", flag.ContinueOnError)
	pid := fl.Int("pid", 0, "the daemon's process ID (systemd: $MAINPID); 0 reads it from --lock-file")
	lockPath := fl.String("lock-file", defaultLockFile, "the running daemon's lock, for its pid when --pid is 0; if nobody holds it, a dry run's NAME.dry-run.lock")
	statusPath := fl.String("reload-status", defaultReloadStatus, "the daemon's --reload-status file")
	timeout := fl.Duration("timeout", 60*time.Second, "how long to wait for the reload to be applied")
	if code, done := parseArgs(fl, args, stdout, stderr, nil); done {
		return code
	}
	if *pid < 0 || *timeout <= 0 || *statusPath == "" {
		fmt.Fprintln(stderr, "numairqd reload: --pid must be >= 0, --timeout > 0 and --reload-status set")
		return 2
	}
	p := *pid
	if p == 0 {
		var err error
		if p, err = lockHolder(*lockPath); err != nil {
			dp, derr := lockHolder(dryRunLock(*lockPath))
			if derr != nil {
				return fail(stderr, "reload", err)
			}
			p = dp
		}
	} else if err := isNumairqd("/proc", p); err != nil {
		return fail(stderr, "reload", err)
	}
	msg, err := reload(p, *statusPath, *timeout)
	if err != nil {
		return fail(stderr, "reload", err)
	}
	fmt.Fprintln(stdout, msg)
	return 0
}

// reload sends SIGHUP to pid and waits for the status file to show a
// reload begun after the signal, which read the config as it is now.
func reload(pid int, statusPath string, timeout time.Duration) (string, error) {
	sent := daemon.MonotonicUsec()
	if err := unix.Kill(pid, unix.SIGHUP); err != nil {
		return "", fmt.Errorf("signal numairqd pid %d: %w", pid, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		started, rejected, err := readReloadStatus(statusPath)
		switch {
		case err == nil && started >= sent && rejected == "":
			return fmt.Sprintf("numairqd pid %d reloaded its config and applied it", pid), nil
		case err == nil && started >= sent:
			return "", fmt.Errorf("numairqd pid %d rejected the config, the previous one stays in force: %s", pid, rejected)
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return "", err
		}
		if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
			return "", fmt.Errorf("numairqd pid %d exited before it reloaded", pid)
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("numairqd pid %d did not record a reload in %s within %s (is it running with --reload-status %s?)", pid, statusPath, timeout, statusPath)
		}
		time.Sleep(reloadPoll)
	}
}

// lockHolder is the pid in the lock file of a running daemon. A lock
// nobody holds is an error: its pid may be another process's by now.
func lockHolder(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("no running numairqd: %w", err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		return 0, fmt.Errorf("no running numairqd: nobody holds the lock %s", path)
	} else if !errors.Is(err, unix.EWOULDBLOCK) {
		return 0, fmt.Errorf("lock %s: %w", path, err)
	}
	pid, s, err := lockPid(f)
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("lock %s: %q is not a pid", path, s)
	}
	return pid, nil
}

// lockPid reads the pid a lock file holds, and the text read.
func lockPid(f *os.File) (int, string, error) {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	return pid, string(b[:n]), err
}

// isNumairqd checks, before a SIGHUP that would end most programs,
// that pid runs numairqd: its executable (" (deleted)" after an
// upgrade) is this command's or named numairqd, else its comm is this
// command's or "numairqd". A pid from the lock file needs no check.
func isNumairqd(proc string, pid int) error {
	self, _ := os.Executable()
	exe, err := os.Readlink(filepath.Join(proc, strconv.Itoa(pid), "exe"))
	if err == nil {
		exe = strings.TrimSuffix(exe, " (deleted)")
		if exe == self || filepath.Base(exe) == "numairqd" {
			return nil
		}
		return fmt.Errorf("pid %d is %s, not numairqd: not signalled", pid, exe)
	}
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no process %d", pid)
	}
	comm, cerr := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "comm"))
	own, _ := os.ReadFile(filepath.Join(proc, "self", "comm"))
	name := strings.TrimSpace(string(comm))
	if cerr == nil && (name == "numairqd" || name == strings.TrimSpace(string(own))) {
		return nil
	}
	return fmt.Errorf("pid %d: cannot tell that it is numairqd (%v; comm %q): not signalled", pid, err, name)
}

// defaultLockFile is in the unit's RuntimeDirectory, writable under
// ProtectSystem=strict.
const defaultLockFile = "/run/numairqd/numairqd.lock"

// dryRunLock is the lock a dry run holds beside the writers' lock at
// path, X.dry-run.lock for X.lock: only its pid, for numairqd reload.
func dryRunLock(path string) string {
	return strings.TrimSuffix(path, ".lock") + ".dry-run.lock"
}

// lockFile makes this process the only numairqd writing affinities on
// the host: an exclusive flock on path, which holds our pid. The
// kernel drops it however the process exits; keep the file open.
func lockFile(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		holder := "another process"
		if pid, _, perr := lockPid(f); perr == nil {
			holder = fmt.Sprintf("numairqd pid %d", pid)
		}
		return nil, fmt.Errorf("lock %s: held by %s: another numairqd is running on this host (two would fight over the same affinities)", path, holder)
	}
	if err := f.Truncate(0); err != nil {
		return nil, errors.Join(fmt.Errorf("lock %s: %w", path, err), f.Close())
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		return nil, errors.Join(fmt.Errorf("lock %s: %w", path, err), f.Close())
	}
	return f, nil
}
