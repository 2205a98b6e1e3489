package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// defaultLockFile is in the unit's RuntimeDirectory, which is writable
// under ProtectSystem=strict.
const defaultLockFile = "/run/numairqd/numairqd.lock"

// lockFile makes this process the only numairqd writing affinities on
// the host: an exclusive flock on path, holding our pid, which the
// kernel drops however the process exits. Keep the file open.
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
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b[:n]))); perr == nil {
			holder = fmt.Sprintf("numairqd pid %d", pid)
		}
		return nil, fmt.Errorf("lock %s: held by %s: another numairqd is running on this host (two would fight over the same affinities)", path, holder)
	}
	// The pid is for the message above; the flock is the lock.
	if err := f.Truncate(0); err != nil {
		return nil, errors.Join(fmt.Errorf("lock %s: %w", path, err), f.Close())
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		return nil, errors.Join(fmt.Errorf("lock %s: %w", path, err), f.Close())
	}
	return f, nil
}
