package inventory

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
)

// maxTxQueues bounds the tx queues per interface, as the kernel does.
const maxTxQueues = 4096

// readQueues returns a fresh copy of devs with their interfaces' tx
// queues and NAPI kthreads, re-read with the affinities. Errors stay
// with the queue, interface or device, never failing the round.
func (fsys FS) readQueues(kr *kernfs.Reader, devs []Device) []Device {
	out := fsys.readTxQueues(kr, devs)
	fsys.readNAPI(kr, out)
	return out
}

// readTxQueues returns a copy of devs with their interfaces' tx queues,
// listed afresh: ethtool -L changes them with no IRQ requested.
func (fsys FS) readTxQueues(kr *kernfs.Reader, devs []Device) []Device {
	out := slices.Clone(devs)
	for i := range out {
		out[i].TxQueues, out[i].TxQueuesErr = nil, nil
		for _, name := range out[i].Interfaces {
			qs, err := fsys.interfaceTxQueues(kr, name)
			out[i].TxQueuesErr = errors.Join(out[i].TxQueuesErr, err)
			out[i].TxQueues = append(out[i].TxQueues, qs...)
		}
	}
	return out
}

// interfaceTxQueues reads the tx queues of interface name, in order;
// none when queues/ cannot be listed or holds a bad tx- entry.
func (fsys FS) interfaceTxQueues(kr *kernfs.Reader, name string) ([]TxQueue, error) {
	dir := filepath.Join(fsys.Sys, "class", "net", name, "queues")
	names, err := dirNames(kr, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // the interface is gone
	}
	if err != nil {
		return nil, kernfs.FileErr(dir, err)
	}
	var qs []TxQueue
	for _, n := range names {
		num, ok := strings.CutPrefix(n, "tx-")
		if !ok {
			continue
		}
		k, err := strconv.Atoi(num)
		if err != nil || k < 0 || k >= maxTxQueues || strconv.Itoa(k) != num {
			return nil, kernfs.Malformed(dir, "entry %s is not tx-N with N below %d", kernfs.Quote(n), maxTxQueues)
		}
		q := TxQueue{Interface: name, Queue: k}
		q.XPS, q.Err = readXPS(kr, filepath.Join(dir, n, "xps_cpus"))
		qs = append(qs, q)
	}
	slices.SortFunc(qs, func(a, b TxQueue) int { return cmp.Compare(a.Queue, b.Queue) })
	return qs, nil
}

// readXPS reads and parses one xps_cpus file (hex).
func readXPS(kr *kernfs.Reader, path string) (cpumask.Mask, error) {
	data, err := kr.Read(path)
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Op == "read" && errors.Is(err, syscall.ENOENT) {
		return cpumask.Mask{}, fmt.Errorf("read %s: %w: %w", path, ErrXPSUnsupported, syscall.ENOENT)
	}
	if err != nil {
		return cpumask.Mask{}, kernfs.FileErr(path, err)
	}
	m, err := cpumask.ParseHex(string(data))
	if err != nil {
		return cpumask.Mask{}, fmt.Errorf("read %s: %w", path, err)
	}
	return m, nil
}
