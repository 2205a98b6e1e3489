package fight

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// Bounds on Find's scans: processes and .link files looked at.
const (
	maxProcs = 32768
	maxLinks = 256
)

var errEnough = errors.New("enough")

// Find names the likely other writer, read under the proc and etc roots
// (and the run, usr/lib and lib trees beside etc): a running irqbalance,
// else a running tuned, else a .link file setting IRQAffinityPolicy=
// (systemd 260+'s udev applies it), else Unknown. It runs when a fight
// starts, not every round.
func Find(proc, etc string) Writer {
	if w := findProcess(proc); w.Kind != Unknown {
		return w
	}
	if etc == "" {
		return Writer{Kind: Unknown}
	}
	root := filepath.Dir(etc)
	for _, dir := range []string{filepath.Join(etc, "systemd/network"), filepath.Join(root, "run/systemd/network"),
		filepath.Join(root, "usr/lib/systemd/network"), filepath.Join(root, "lib/systemd/network")} {
		if f := findLink(dir); f != "" {
			return Writer{Kind: Link, File: f}
		}
	}
	return Writer{Kind: Unknown}
}

// findProcess looks for irqbalance, then tuned, among the first
// maxProcs processes under proc.
func findProcess(proc string) Writer {
	var dir, files kernfs.Reader
	tuned := Writer{Kind: Unknown}
	found := tuned
	n := 0
	// An unreadable proc names nobody.
	_ = dir.ReadDir(proc, func(name []byte) error {
		if !kernfs.IsDigits(name) {
			return nil
		}
		if n++; n > maxProcs {
			return errEnough
		}
		pid, _ := strconv.Atoi(string(name))
		comm, err := files.Read(filepath.Join(proc, string(name), "comm"))
		switch {
		case err != nil:
		case string(comm) == Irqbalance:
			found = Writer{Kind: Irqbalance, PID: pid}
			return errEnough
		case tuned.PID == 0 && (string(comm) == Tuned || bytes.HasPrefix(comm, []byte("python")) && runsTuned(&files, proc, string(name))):
			tuned = Writer{Kind: Tuned, PID: pid}
		}
		return nil
	})
	if found.Kind == Unknown {
		return tuned
	}
	return found
}

// runsTuned reports whether process pid's command line runs tuned
// (python3 /usr/sbin/tuned -l -P).
func runsTuned(r *kernfs.Reader, proc, pid string) bool {
	cmdline, err := r.Read(filepath.Join(proc, pid, "cmdline"))
	if err != nil {
		return false
	}
	return slices.ContainsFunc(bytes.Split(cmdline, []byte{0}), func(arg []byte) bool { return filepath.Base(string(arg)) == Tuned })
}

// findLink returns the first .link file in dir, by name, that sets a
// non-empty IRQAffinityPolicy=, "" for none.
func findLink(dir string) string {
	names, _ := kernfs.ReadDirNames(dir)
	var r kernfs.Reader
	for i, name := range names {
		if i == maxLinks {
			break
		}
		if !strings.HasSuffix(name, ".link") {
			continue
		}
		path := filepath.Join(dir, name)
		b, err := r.Read(path)
		if err != nil {
			continue
		}
		for line := range bytes.Lines(b) {
			v, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("IRQAffinityPolicy="))
			if ok && len(bytes.TrimSpace(v)) > 0 {
				return path
			}
		}
	}
	return ""
}
