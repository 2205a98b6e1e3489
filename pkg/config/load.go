package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"syscall"
)

// maxSize is the largest config file Load accepts, in bytes.
const maxSize = 1 << 20

// Load reads and parses the regular file of at most maxSize bytes at path.
func Load(path string) (*Config, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data)
}

// readFile reads the regular file at path, checked before and after open.
func readFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err == nil {
		err = regular(path, fi)
	}
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err == nil {
		err = regular(path, fi)
	}
	if err != nil {
		return nil, err
	}
	var data []byte
	if fi.Size() <= maxSize {
		if data, err = io.ReadAll(io.LimitReader(f, maxSize+1)); err != nil {
			return nil, err
		}
	}
	if fi.Size() > maxSize || len(data) > maxSize {
		return nil, fmt.Errorf("%s: larger than the limit of %d bytes (want a file of at most 1 MiB)", path, maxSize)
	}
	return data, nil
}

// regular returns an error naming path and its type unless it is regular.
func regular(path string, fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "a file of type " + m.Type().String()
	if i := slices.IndexFunc(fileTypes, func(t fileType) bool { return m&t.mode != 0 }); i >= 0 {
		what = fileTypes[i].what
	}
	return fmt.Errorf("%s: is %s, not a regular file (want a regular file, or a symlink to one)", path, what)
}

// fileType names a file mode bit; a character device also has ModeDevice.
type fileType struct {
	mode fs.FileMode
	what string
}

var fileTypes = []fileType{{fs.ModeDir, "a directory"}, {fs.ModeNamedPipe, "a named pipe (FIFO)"},
	{fs.ModeSocket, "a socket"}, {fs.ModeCharDevice, "a character device"}, {fs.ModeDevice, "a block device"}}

// DefaultPath is where numairqd reads its config when none is named.
const DefaultPath = "/etc/numairqd/numairqd.yaml"

// LoadOrDefault is Load, except that a missing file gives Default.
func LoadOrDefault(path string) (*Config, error) {
	c, err := Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	return c, err
}
