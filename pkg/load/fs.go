package load

import (
	"errors"
	"fmt"
	"io/fs"
)

// FS is the procfs root the sampler reads: "/proc" on a host, a fixture
// directory in tests.
type FS struct {
	Proc string
}

// fileErr names path once: it replaces an *fs.PathError (which names it
// too) by its cause, keeping errors.Is(err, fs.ErrNotExist) working.
func fileErr(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		err = pe.Err
	}
	return fmt.Errorf("read %s: %w", path, err)
}
