package topology

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// FS is a sysfs tree rooted at Root.
type FS struct {
	Root string
}

// NewFS returns the sysfs tree mounted at root.
func NewFS(root string) FS { return FS{Root: root} }

func (fs FS) path(elem ...string) string {
	return filepath.Join(append([]string{fs.Root}, elem...)...)
}

// readString returns the file's content, trimmed; parsers wrap
// kernfs.ErrMalformed. Kernels from 5.15 end the CPU lists and masks of
// topology/ and nodeN/ with the string's NUL ("0-3\n\x00"): their
// bin_attribute reads copy strlen + 1 bytes (lib/bitmap.c
// bitmap_print_to_buf); the NUL and what it ends are dropped.
func (fs FS) readString(elem ...string) (string, error) {
	s, err := kernfs.ReadTrimmed(fs.path(elem...))
	return strings.TrimSpace(strings.TrimRight(s, "\x00")), err
}

func (fs FS) readList(elem ...string) (cpumask.Mask, error) {
	s, err := fs.readString(elem...)
	if err != nil {
		return cpumask.Mask{}, err
	}
	m, err := cpumask.ParseList(s)
	if err != nil {
		return cpumask.Mask{}, kernfs.Malformed(fs.path(elem...), "%w", err)
	}
	return m, nil
}

// readOptionalList is readList with a missing file the empty set.
func (fs FS) readOptionalList(elem ...string) (cpumask.Mask, error) {
	m, err := fs.readList(elem...)
	if errors.Is(err, os.ErrNotExist) {
		return cpumask.Mask{}, nil
	}
	return m, err
}

func (fs FS) readInt(elem ...string) (int, error) {
	s, err := fs.readString(elem...)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, kernfs.Malformed(fs.path(elem...), "%s is not an integer", kernfs.Quote(s))
	}
	return n, nil
}

// Online reads devices/system/cpu/online alone.
func (fs FS) Online() (cpumask.Mask, error) {
	m, err := fs.readList("devices", "system", "cpu", "online")
	if err != nil {
		return cpumask.Mask{}, fmt.Errorf("topology: %w", err)
	}
	return m, nil
}
