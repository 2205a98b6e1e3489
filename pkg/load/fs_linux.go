package load

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// ReadInterrupts reads <Proc>/interrupts with the inventory's parser.
func (fsys FS) ReadInterrupts() (inventory.Interrupts, error) {
	return inventory.FS{Proc: fsys.Proc}.ReadInterrupts()
}

// ReadStat reads and parses <Proc>/stat, at most maxStatSize bytes.
func (fsys FS) ReadStat() (cpus []CPUStat, err error) {
	err = kernfs.ParseFile(filepath.Join(fsys.Proc, "stat"), maxStatSize, func(r io.Reader) (err error) {
		cpus, err = ParseStat(r)
		return err
	})
	if err != nil {
		return nil, err
	}
	return cpus, nil
}

// Sample reads /proc/stat and /proc/interrupts and folds what changed
// since the previous sample into the averages. A failed read, or a now
// not after the previous one, changes nothing.
func (s *Sampler) Sample(now time.Time) (Loads, error) {
	if s.primed && !now.After(s.last) {
		return Loads{}, fmt.Errorf("load sample at %s is not after the previous one at %s",
			now.Format(time.RFC3339Nano), s.last.Format(time.RFC3339Nano))
	}
	stat, err := s.fs.ReadStat()
	if err != nil {
		return Loads{}, err
	}
	ints, err := s.fs.ReadInterrupts()
	if err != nil {
		return Loads{}, err
	}
	var qc QueueCounts
	if s.reader != nil {
		qc = s.reader.ReadQueues()
	}
	return s.add(now, stat, ints, qc), nil
}
