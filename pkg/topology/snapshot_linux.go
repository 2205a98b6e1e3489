package topology

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// Read builds a Snapshot of what planning uses; Possible is empty.
func (fs FS) Read() (*Snapshot, error) { return fs.readOnce(false, nil) }

// ReadDetail is Read plus the possible CPUs (`numairqd topology`).
func (fs FS) ReadDetail() (*Snapshot, error) { return fs.readOnce(true, nil) }

func (fs FS) readOnce(detail bool, k *kept) (*Snapshot, error) {
	s, err := fs.read(detail, k)
	if err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	return s, nil
}

// NoNodeError is an online CPU that no node's cpulist holds, as when a
// CPU goes offline mid-read; reading again tells whether it persists.
type NoNodeError struct{ err error }

func (e *NoNodeError) Error() string { return e.err.Error() }
func (e *NoNodeError) Unwrap() error { return e.err }

// read reads a Snapshot, using and filling k (a Reader's) if not nil.
func (fs FS) read(detail bool, k *kept) (*Snapshot, error) {
	s := &Snapshot{nodeIndex: map[int]int{}, cpus: map[int]CPU{}}
	cpuDir := []string{"devices", "system", "cpu"}
	var err error
	if s.online, err = fs.readList(append(cpuDir, "online")...); err != nil {
		return nil, err
	}
	if s.online.IsEmpty() {
		return nil, kernfs.Malformed(fs.path(append(cpuDir, "online")...), "no online CPU")
	}
	if detail {
		if s.possible, err = fs.readOptionalList(append(cpuDir, "possible")...); err != nil {
			return nil, err
		}
		s.possible = s.possible.Or(s.online)
	}
	if k != nil && k.boot {
		s.isolated, s.nohzFull = k.isolated, k.nohzFull
	} else {
		if s.isolated, err = fs.readOptionalList(append(cpuDir, "isolated")...); err != nil {
			return nil, err
		}
		if s.nohzFull, err = fs.readNohzFull(append(cpuDir, "nohz_full")...); err != nil {
			return nil, err
		}
	}
	if err := fs.readNodes(s, k); err != nil {
		return nil, err
	}
	var cores map[int]cpumask.Mask
	if k != nil {
		cores = k.cores
		k.boot, k.isolated, k.nohzFull = true, s.isolated, s.nohzFull
	}
	if err := fs.readCPUs(s, cores); err != nil {
		return nil, err
	}
	if err := fs.readPackagesAndCaches(s, k); err != nil {
		return nil, err
	}
	s.buildHops()
	return s, nil
}

// readNohzFull reads nohz_full; "(null)" (booted without nohz_full=)
// means none.
func (fs FS) readNohzFull(elem ...string) (cpumask.Mask, error) {
	s, err := fs.readString(elem...)
	switch {
	case errors.Is(err, os.ErrNotExist) || err == nil && s == "(null)":
		return cpumask.Mask{}, nil
	case err != nil:
		return cpumask.Mask{}, err
	}
	m, err := cpumask.ParseList(s)
	if err != nil {
		return cpumask.Mask{}, kernfs.Malformed(fs.path(elem...), "%w", err)
	}
	return m, nil
}

// readNodes reads the online nodes, their distances and their CPUs.
func (fs FS) readNodes(s *Snapshot, k *kept) error {
	nodeDir := []string{"devices", "system", "node"}
	ids, err := fs.readList(append(nodeDir, "online")...)
	if errors.Is(err, os.ErrNotExist) {
		if _, statErr := kernfs.Stat(fs.path(nodeDir...)); errors.Is(statErr, os.ErrNotExist) {
			// !CONFIG_NUMA: one implicit node 0 with every CPU.
			s.implicit = true
			s.nodes = []Node{{ID: 0, CPUs: s.online, Distance: []int{10}}}
			s.nodeIndex[0] = 0
			for c := range s.online.All() {
				s.cpus[c] = newCPU(c, 0)
			}
			return nil
		}
	}
	if err != nil {
		return err
	}
	if ids.IsEmpty() {
		return kernfs.Malformed(fs.path(append(nodeDir, "online")...), "no online node")
	}
	for id := range ids.All() {
		s.nodeIndex[id] = len(s.nodes)
		s.nodes = append(s.nodes, Node{ID: id})
	}
	var distances map[int][]int // kept rows, valid for these nodes
	if k != nil {
		if !k.nodes.Equal(ids) {
			k.nodes, k.distance = ids, map[int][]int{}
		}
		distances = k.distance
	}
	for i := range s.nodes {
		n := &s.nodes[i]
		dir := append(nodeDir, "node"+strconv.Itoa(n.ID))
		cpus, err := fs.readList(append(dir, "cpulist")...)
		if err != nil {
			return err
		}
		// As the kernel does, so a racing hotplug leaves no offline CPU.
		n.CPUs = cpus.And(s.online)
		for c := range n.CPUs.All() {
			if prev, dup := s.cpus[c]; dup {
				return kernfs.Malformed(fs.path(append(dir, "cpulist")...), "CPU %d is also on node %d", c, prev.Node)
			}
			s.cpus[c] = newCPU(c, n.ID)
		}
		if row, ok := distances[n.ID]; ok {
			n.Distance = row
			continue // checked when it was read
		}
		if n.Distance, err = fs.readDistance(len(s.nodes), append(dir, "distance")...); err != nil {
			return err
		}
		// The kernel's SLIT check rejects a table that says otherwise.
		if d := n.Distance[i]; d != localDistance {
			return kernfs.Malformed(fs.path(append(dir, "distance")...),
				"entry %d, node %d's distance to itself, is %d, want %d (LOCAL_DISTANCE)", i, n.ID, d, localDistance)
		}
		if distances != nil {
			distances[n.ID] = n.Distance
		}
	}
	// An online CPU in no cpulist would drop out of every spread order.
	var onNode cpumask.Builder
	for _, n := range s.nodes {
		onNode.Or(n.CPUs)
	}
	if lost := s.online.AndNot(onNode.Mask()); !lost.IsEmpty() {
		return &NoNodeError{kernfs.Malformed(fs.path("devices", "system", "cpu", "online"),
			"online CPUs %s are in no node's cpulist (%s)", kernfs.Quote(lost.String()), fs.path(append(nodeDir, "node*", "cpulist")...))}
	}
	return nil
}

// localDistance is LOCAL_DISTANCE, a node's distance to itself.
const localDistance = 10

// readDistance parses one row of the node distance table (10 to 255).
func (fs FS) readDistance(want int, elem ...string) ([]int, error) {
	s, err := fs.readString(elem...)
	if err != nil {
		return nil, err
	}
	fields := strings.Fields(s)
	if len(fields) != want {
		return nil, kernfs.Malformed(fs.path(elem...), "%s has %d entries, want one per online node (%d)", kernfs.Quote(s), len(fields), want)
	}
	row := make([]int, len(fields))
	for k, f := range fields {
		d, err := strconv.Atoi(f)
		if err != nil || d < localDistance || d > 255 {
			return nil, kernfs.Malformed(fs.path(elem...), "entry %d is %s, want a distance from 10 to 255", k, kernfs.Quote(f))
		}
		row[k] = d
	}
	return row, nil
}

// readCPUs reads each online CPU's SMT siblings once per core; CPUs in
// cores (a Reader's) are not read again.
func (fs FS) readCPUs(s *Snapshot, cores map[int]cpumask.Mask) error {
	for c := range s.online.All() {
		if cpu := s.cpus[c]; cpu.Core != c || cpu.Siblings.Weight() > 1 {
			continue // already filled in from an earlier sibling
		}
		sib, ok := cores[c]
		if !ok {
			var err error
			if sib, err = fs.readSiblings(c, s.online); err != nil {
				return err
			}
			if cores != nil {
				for t := range sib.All() {
					cores[t] = cores[t].Or(sib)
				}
			}
		}
		sib = sib.And(s.online)
		for t := range sib.All() {
			x := s.cpus[t]
			x.Siblings, x.Core = sib, sib.First()
			s.cpus[t] = x
		}
	}
	return nil
}

// readSiblings reads CPU c's online SMT siblings; c alone without SMT
// information.
func (fs FS) readSiblings(c int, online cpumask.Mask) (cpumask.Mask, error) {
	dir := []string{"devices", "system", "cpu", "cpu" + strconv.Itoa(c), "topology"}
	sib, err := fs.readList(append(dir, "core_cpus_list")...)
	if errors.Is(err, os.ErrNotExist) {
		sib, err = fs.readList(append(dir, "thread_siblings_list")...)
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return cpumask.New(c), nil // no SMT information: the CPU is its own core
	case err != nil:
		return cpumask.Mask{}, err
	}
	sib = sib.And(online)
	if !sib.Contains(c) {
		return cpumask.Mask{}, kernfs.Malformed(fs.path(append(dir, "core_cpus_list")...), "siblings %s do not include CPU %d", kernfs.Quote(sib.String()), c)
	}
	return sib, nil
}

// Reader reads snapshots round after round, keeping what cannot change
// while the machine runs: cores, packages and caches of CPUs seen, the
// boot's isolated and nohz_full CPUs, and the distances while the same
// nodes are online. A Reader is for one goroutine.
type Reader struct {
	fs FS
	k  kept
}

// kept is what a Reader keeps between reads.
type kept struct {
	cores              map[int]cpumask.Mask
	pkg                map[int]int
	llc                map[int]cpumask.Mask
	boot               bool // isolated and nohzFull were read
	isolated, nohzFull cpumask.Mask
	nodes              cpumask.Mask  // the online nodes of distance's rows
	distance           map[int][]int // rows by node
}

// NewReader returns a Reader of fs that keeps nothing yet.
func NewReader(fs FS) *Reader {
	return &Reader{fs: fs, k: kept{cores: map[int]cpumask.Mask{}, pkg: map[int]int{}, llc: map[int]cpumask.Mask{}, distance: map[int][]int{}}}
}

// Read is FS.Read, reading siblings only of CPUs not seen before.
func (r *Reader) Read() (*Snapshot, error) { return r.fs.readOnce(false, &r.k) }

// Online is FS.Online of the Reader's tree.
func (r *Reader) Online() (cpumask.Mask, error) { return r.fs.Online() }

// Forget drops everything kept.
func (r *Reader) Forget() {
	clear(r.k.cores)
	clear(r.k.pkg)
	clear(r.k.llc)
	clear(r.k.distance)
	r.k.boot = false
}

// readPackagesAndCaches fills each CPU's Package and LLC, reading each
// group once and CPUs in k (a Reader's) not at all.
func (fs FS) readPackagesAndCaches(s *Snapshot, k *kept) error {
	if k != nil {
		for c := range s.online.All() {
			x := s.cpus[c]
			if p, ok := k.pkg[c]; ok {
				x.Package = p
			}
			if l, ok := k.llc[c]; ok {
				x.LLC = l.And(s.online)
			}
			s.cpus[c] = x
		}
	}
	for c := range s.online.All() {
		if s.cpus[c].Package >= 0 {
			continue
		}
		dir := []string{"devices", "system", "cpu", "cpu" + strconv.Itoa(c), "topology"}
		pkg, err := fs.readInt(append(dir, "physical_package_id")...)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		members, err := fs.readList(append(dir, "package_cpus_list")...)
		if errors.Is(err, os.ErrNotExist) {
			members, err = fs.readList(append(dir, "core_siblings_list")...)
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		for t := range members.And(s.online).Or(cpumask.New(c)).All() {
			x := s.cpus[t]
			x.Package = pkg
			s.cpus[t] = x
			if k != nil {
				k.pkg[t] = pkg
			}
		}
	}
	for c := range s.online.All() {
		if !s.cpus[c].LLC.IsEmpty() {
			continue
		}
		llc, err := fs.readLLC(c)
		if err != nil {
			return err
		}
		if k != nil && !llc.IsEmpty() {
			for t := range llc.All() {
				k.llc[t] = llc
			}
		}
		llc = llc.And(s.online)
		for t := range llc.All() {
			x := s.cpus[t]
			x.LLC = llc
			s.cpus[t] = x
		}
	}
	return nil
}

// readLLC returns the CPUs sharing cpu's last data or unified cache;
// empty without a cache directory.
func (fs FS) readLLC(cpu int) (cpumask.Mask, error) {
	dir := []string{"devices", "system", "cpu", "cpu" + strconv.Itoa(cpu), "cache"}
	entries, err := kernfs.ReadDirNames(fs.path(dir...))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return cpumask.Mask{}, err
	}
	best, bestLevel := "", 0
	for _, e := range entries {
		if !strings.HasPrefix(e, "index") {
			continue
		}
		typ, err := fs.readString(append(dir, e, "type")...)
		if err != nil || typ == "Instruction" {
			continue
		}
		level, err := fs.readInt(append(dir, e, "level")...)
		if err != nil {
			return cpumask.Mask{}, err
		}
		if level > bestLevel {
			best, bestLevel = e, level
		}
	}
	if best == "" {
		return cpumask.Mask{}, nil
	}
	m, err := fs.readList(append(dir, best, "shared_cpu_list")...)
	if errors.Is(err, os.ErrNotExist) {
		return cpumask.Mask{}, nil
	}
	if err == nil && !m.Contains(cpu) {
		m = m.Or(cpumask.New(cpu))
	}
	return m, err
}
