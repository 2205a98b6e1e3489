package bans

import (
	"errors"
	"io/fs"
	"path/filepath"

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
