// Package fakesys builds sysfs and procfs fixture trees in a temporary
// directory, so every reader in numairqd can be tested on a machine
// described in a few lines instead of on the host's real /sys and /proc.
package fakesys

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// Tree is a fixture root holding "sys" and "proc" directories.
type Tree struct {
	Root string
	tb   testing.TB
}

// New returns an empty tree in a fresh temporary directory.
func New(tb testing.TB) *Tree {
	tb.Helper()
	root := tb.TempDir()
	for _, d := range []string{"sys", "proc"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return &Tree{Root: root, tb: tb}
}

// Sys is the sysfs root to pass to readers (what /sys is on a host).
func (t *Tree) Sys() string { return filepath.Join(t.Root, "sys") }

// Proc is the procfs root to pass to readers (what /proc is on a host).
func (t *Tree) Proc() string { return filepath.Join(t.Root, "proc") }

// Path joins rel onto the tree's root.
func (t *Tree) Path(rel string) string { return filepath.Join(t.Root, rel) }

// WriteFile writes content to rel (relative to Root) with mode 0644,
// creating parent directories.
func (t *Tree) WriteFile(rel, content string) { t.WriteFileMode(rel, content, 0o644) }

// WriteFileMode is WriteFile with an explicit mode, e.g. 0444 for the
// read-only smp_affinity of a managed IRQ.
func (t *Tree) WriteFileMode(rel, content string, mode os.FileMode) {
	t.tb.Helper()
	p := t.Path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.tb.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.tb.Fatal(err)
	}
}

// Mkdir creates the directory rel and its parents.
func (t *Tree) Mkdir(rel string) {
	t.tb.Helper()
	if err := os.MkdirAll(t.Path(rel), 0o755); err != nil {
		t.tb.Fatal(err)
	}
}

// Symlink creates rel as a symbolic link to target (taken verbatim, so a
// relative target is relative to rel's directory, as in sysfs).
func (t *Tree) Symlink(target, rel string) {
	t.tb.Helper()
	p := t.Path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.tb.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.tb.Fatal(err)
	}
}

// Remove deletes rel and everything below it.
func (t *Tree) Remove(rel string) {
	t.tb.Helper()
	if err := os.RemoveAll(t.Path(rel)); err != nil {
		t.tb.Fatal(err)
	}
}

// MustMask parses a CPU list such as "0-3,8", failing tb on bad input;
// "" is the empty set.
func MustMask(tb testing.TB, list string) cpumask.Mask {
	tb.Helper()
	m, err := cpumask.ParseList(list)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}
