package load

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/netdev"
)

// NetCounters reads the per-queue packet counters of a host's NICs (not
// veths or bridges): qstats-get where the kernel answers, else ethtool
// -S. Sys is "/sys". Make one with NewNetCounters.
type NetCounters struct {
	Sys string
	// none holds the interfaces whose driver has no per-queue ethtool
	// counters, so they are not asked every sample.
	none *sync.Map
	// qstats and ethtool read netdev's counters; tests replace them.
	qstats  func() ([]netdev.Stats, error)
	ethtool func(iface string) ([]netdev.Stats, string, error)
}

type ifaceKey struct {
	name  string
	index int
}

// ReadQueues implements QueueReader.
func (n NetCounters) ReadQueues() QueueCounts {
	c := QueueCounts{Sources: map[string]string{}}
	ifaces, err := nicInterfaces(n.Sys)
	if err != nil {
		c.Err = err
		return c
	}
	if len(ifaces) == 0 {
		return c
	}
	names := make(map[int]string, len(ifaces))
	for _, i := range ifaces {
		names[i.index] = i.name
	}
	sums := map[queueKey]uint64{} // rx + tx packets
	n.forgetGone(ifaces)
	st, err := n.qstats()
	switch {
	case err == nil:
		for _, s := range st {
			if name, ok := names[s.Ifindex]; ok {
				sums[queueKey{name, s.ID}] += s.Packets
				c.Sources[name] = SourceQStats
			}
		}
	case !netdev.Unavailable(err):
		c.Err = fmt.Errorf("qstats-get: %w", err)
	}
	for _, i := range ifaces {
		if c.Sources[i.name] != "" || n.known(i) {
			continue
		}
		es, _, err := n.ethtool(i.name)
		switch {
		case errors.Is(err, netdev.ErrNoQueueStats):
			n.remember(i)
			continue
		case err != nil:
			c.Err = errors.Join(c.Err, err)
			continue
		}
		for _, s := range es {
			sums[queueKey{i.name, s.ID}] += s.Packets
		}
		if len(es) > 0 {
			c.Sources[i.name] = SourceEthtool
		}
	}
	for k, p := range sums {
		c.Counts = append(c.Counts, QueueCount{Interface: k.iface, Queue: k.queue, Packets: p})
	}
	return c
}

func (n NetCounters) known(i ifaceKey) bool {
	_, ok := n.none.Load(i)
	return ok
}

func (n NetCounters) remember(i ifaceKey) { n.none.Store(i, true) }

// forgetGone drops the remembered interfaces not in ifaces.
func (n NetCounters) forgetGone(ifaces []ifaceKey) {
	n.none.Range(func(k, _ any) bool {
		if !slices.Contains(ifaces, k.(ifaceKey)) {
			n.none.Delete(k)
		}
		return true
	})
}

// NewNetCounters returns a NetCounters of the sysfs at sys.
func NewNetCounters(sys string) NetCounters {
	return NetCounters{Sys: sys, none: &sync.Map{}, qstats: netdev.DumpQStats, ethtool: netdev.EthtoolQueueStats}
}

// nicInterfaces lists sys/class/net's interfaces with a device link.
func nicInterfaces(sys string) ([]ifaceKey, error) {
	dir := filepath.Join(sys, "class", "net")
	ents, err := kernfs.ReadDirNames(dir)
	if err != nil {
		return nil, err
	}
	var out []ifaceKey
	var kr kernfs.Reader
	for _, e := range ents {
		if _, err := kr.Readlink(filepath.Join(dir, e, "device")); err != nil {
			continue
		}
		b, err := kr.Read(filepath.Join(dir, e, "ifindex"))
		if err != nil {
			continue
		}
		idx, err := strconv.Atoi(string(b))
		if err != nil || idx <= 0 {
			continue
		}
		out = append(out, ifaceKey{e, idx})
	}
	return out, nil
}

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
