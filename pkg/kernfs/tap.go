package kernfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
)

// Op is what a reader did with a path.
type Op uint8

// The accesses a Recorder sees.
const (
	OpFile Op = iota // read a file: Data as read
	OpDir            // listed a directory: Names
	OpLink           // read a symlink: Target
	OpStat           // looked at what the path resolves to
)

// Access is one read of the kernel's files.
type Access struct {
	Op     Op
	Path   string
	Data   []byte // valid only during Record
	Names  []string
	Target string
	Err    error
}

// Recorder sees every read this package makes while it is tapped in
// (capture records a machine this way). It is called from any goroutine.
type Recorder interface{ Record(Access) }

type tapped struct{ r Recorder }

var tap atomic.Pointer[tapped]

// Tap has r see every read until the returned untap is called; false
// when another Recorder is tapped in.
func Tap(r Recorder) (untap func(), ok bool) {
	t := &tapped{r}
	if !tap.CompareAndSwap(nil, t) {
		return nil, false
	}
	return func() { tap.CompareAndSwap(t, nil) }, true
}

// recorder is the Recorder tapped in, nil when none: one atomic load.
func recorder() Recorder {
	if t := tap.Load(); t != nil {
		return t.r
	}
	return nil
}

// Stat is os.Stat, seen by the Recorder.
func Stat(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if r := recorder(); r != nil {
		r.Record(Access{Op: OpStat, Path: path, Err: err})
	}
	return fi, err
}

// EvalSymlinks is filepath.EvalSymlinks, seen by the Recorder as a Stat.
func EvalSymlinks(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if r := recorder(); r != nil {
		r.Record(Access{Op: OpStat, Path: path, Err: err})
	}
	return real, err
}

// ReadDirNames lists the directory at path, sorted, as os.ReadDir does.
func ReadDirNames(path string) ([]string, error) {
	var r Reader
	var names []string
	err := r.ReadDir(path, func(name []byte) error {
		names = append(names, string(name))
		return nil
	})
	slices.Sort(names)
	return names, err
}
