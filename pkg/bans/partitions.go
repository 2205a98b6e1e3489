package bans

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// PartitionsFile is the cgroup v2 root's cpuset.cpus.isolated under the
// sysfs tree sys: the CPUs of every isolated cpuset partition. cri-o
// makes one of each container of a pod annotated
// cpu-load-balancing.crio.io: disable, writing "isolated" to its
// cpuset.cpus.partition (internal/runtimehandlerhooks).
//
// The kernel has it, read-only and on the root only, since 6.8 (commit
// 877c737db935, "cgroup/cpuset: Expose cpuset.cpus.isolated"). It
// notifies no change: its cftype has no file_offset, so
// cgroup_file_notify never reaches it; only each partition's own
// cpuset.cpus.partition is notified (notify_partition_change), and
// those come and go with the cgroups. Readers poll it.
func PartitionsFile(sys string) string {
	return filepath.Join(sys, "fs", "cgroup", "cpuset.cpus.isolated")
}

// ReadPartitions returns the CPUs of isolated cgroup partitions; none
// when the file is missing (no cgroup v2 cpuset, a kernel before 6.8).
func ReadPartitions(sys string) (cpumask.Mask, error) {
	path := PartitionsFile(sys)
	s, ok, err := kernfs.ReadOptional(path)
	if err != nil || !ok {
		return cpumask.Mask{}, err
	}
	m, err := cpumask.ParseList(s)
	if err != nil {
		return cpumask.Mask{}, kernfs.Malformed(path, "%w (want a CPU list such as \"4-7,12\")", err)
	}
	return m, nil
}

// PartitionsAbsent says why sys has no PartitionsFile to read, "" when
// it has one.
func PartitionsAbsent(sys string) string {
	_, err := kernfs.Stat(PartitionsFile(sys))
	switch {
	case err == nil:
		return ""
	case !errors.Is(err, fs.ErrNotExist):
		return err.Error()
	}
	root := filepath.Dir(PartitionsFile(sys))
	if _, err := kernfs.Stat(filepath.Join(root, "cgroup.controllers")); err != nil {
		return "cgroup v2 is not mounted at " + root + " (cgroup v1 or hybrid): isolated partitions are cgroup v2's; not supported"
	}
	return "no " + PartitionsFile(sys) + ": a kernel before 6.8, the cpuset controller on cgroup v1, or a cgroup namespace that hides the root"
}

// maxCgroupDepth bounds the walk of ListPartitions; cri-o's container
// cgroups are three levels down (kubepods.slice/kubepods-pod….slice/
// crio-….scope), four with a shared-CPUs child.
const maxCgroupDepth = 8

// ListPartitions returns the CPUs of each isolated partition holding
// CPUs of isolated, walking the cgroup v2 tree under sys only into
// cgroups whose cpuset.cpus.exclusive.effective has some: a remote
// partition's ancestors carry its CPUs there, a local partition's root
// has them. A partition's CPUs are its exclusive.effective less those
// of isolated partitions below it. Cgroups that go while walking are
// skipped.
func ListPartitions(sys string, isolated cpumask.Mask) ([]cpumask.Mask, error) {
	var out []cpumask.Mask
	var walk func(dir string, depth int) (cpumask.Mask, error)
	walk = func(dir string, depth int) (below cpumask.Mask, err error) {
		names, err := kernfs.ReadDirNames(dir)
		if err != nil || depth > maxCgroupDepth {
			return below, ignoreGone(err)
		}
		for _, name := range names {
			sub := filepath.Join(dir, name)
			// A cgroup's control files are not directories: ENOTDIR.
			cpus, err := readList(filepath.Join(sub, "cpuset.cpus.exclusive.effective"))
			if errors.Is(err, syscall.ENOTDIR) {
				continue
			}
			if err != nil {
				return below, err
			}
			if !cpus.Intersects(isolated) {
				continue
			}
			inner, err := walk(sub, depth+1)
			if err != nil {
				return below, err
			}
			s, _, err := kernfs.ReadOptional(filepath.Join(sub, "cpuset.cpus.partition"))
			if err != nil {
				return below, ignoreGone(err)
			}
			if strings.TrimSpace(s) == "isolated" { // not "isolated invalid (…)"
				out = append(out, cpus.AndNot(inner))
				inner = inner.Or(cpus)
			}
			below = below.Or(inner)
		}
		return below, nil
	}
	_, err := walk(filepath.Dir(PartitionsFile(sys)), 1)
	return out, err
}

// readList reads a CPU list file; a missing one is empty.
func readList(path string) (cpumask.Mask, error) {
	s, ok, err := kernfs.ReadOptional(path)
	if err != nil || !ok {
		return cpumask.Mask{}, ignoreGone(err)
	}
	m, err := cpumask.ParseList(s)
	if err != nil {
		return cpumask.Mask{}, kernfs.Malformed(path, "%w (want a CPU list such as \"4-7,12\")", err)
	}
	return m, nil
}

// ignoreGone drops the error of a cgroup removed meanwhile.
func ignoreGone(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENODEV) {
		return nil
	}
	return err
}

// Housekeeping returns the CPUs of partitions that cri-o's
// irq-load-balancing.crio.io: housekeeping mode leaves to device IRQs.
// For such a pod cri-o makes each container an isolated partition of
// all its CPUs (cpu-load-balancing.crio.io: disable) but clears from
// default_smp_affinity and IRQBALANCE_BANNED_CPUS only the CPUs other
// than the first and its thread siblings (internal/runtimehandlerhooks,
// getHousekeepingCPUs, cri-o 1.34.3 and 1.35.0). So a partition that
// irq, the CPUs banned there, covers in part keeps the rest for IRQs;
// one it covers wholly or not at all is banned whole.
func Housekeeping(parts []cpumask.Mask, irq cpumask.Mask) cpumask.Mask {
	var hk cpumask.Mask
	for _, p := range parts {
		if p.Intersects(irq) && !p.AndNot(irq).IsEmpty() {
			hk = hk.Or(p.AndNot(irq))
		}
	}
	return hk
}
