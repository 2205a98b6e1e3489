package inventory

import (
	"bytes"
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
	"github.com/numairqd/numairqd/pkg/napi"
	"github.com/numairqd/numairqd/pkg/netdev"
)

// readNAPI fills each device's NAPI with its threaded interfaces'
// kthreads. /proc is scanned only when some interface's threaded is on,
// once for all; napi-get is asked only through fsys.Netdev. Errors go
// to the device's NAPI.Err.
func (fsys FS) readNAPI(kr *kernfs.Reader, devs []Device) {
	var threaded []string
	for i := range devs {
		devs[i].NAPI = NAPI{}
		for _, name := range devs[i].Interfaces {
			on, err := fsys.isThreaded(kr, name)
			devs[i].NAPI.Err = errors.Join(devs[i].NAPI.Err, err)
			if on {
				devs[i].NAPI.Threaded = append(devs[i].NAPI.Threaded, name)
				threaded = append(threaded, name)
			}
		}
	}
	if len(threaded) == 0 {
		return
	}
	o := napi.Options{FS: napi.FS{Proc: fsys.Proc, Sys: fsys.Sys}}
	if fsys.Netdev != nil {
		o.NAPIs = fsys.Netdev.NAPIs
	}
	res, err := napi.Find(threaded, o)
	for i := range devs {
		d := &devs[i]
		if len(d.NAPI.Threaded) == 0 {
			continue
		}
		if err != nil {
			d.NAPI.Err = errors.Join(d.NAPI.Err, err)
			continue
		}
		mine := func(iface string) bool { return slices.Contains(d.NAPI.Threaded, iface) }
		for _, t := range res.Threads {
			if !mine(t.Iface) {
				continue
			}
			if th, ok := fsys.napiThread(kr, t); ok {
				d.NAPI.Threads = append(d.NAPI.Threads, th)
			}
		}
		for _, u := range res.Unresolved {
			if slices.ContainsFunc(u.Ifaces, mine) {
				u := NAPIUnresolved{PID: u.PID, Comm: u.Comm, Interfaces: u.Ifaces}
				d.NAPI.Unresolved = append(d.NAPI.Unresolved, u)
			}
		}
	}
}

// isThreaded reads /sys/class/net/name/threaded (5.12+): any value but
// 0 is on; a file missing or refused is off.
func (fsys FS) isThreaded(kr *kernfs.Reader, name string) (bool, error) {
	path := filepath.Join(fsys.Sys, "class", "net", name, "threaded")
	s, ok, err := kr.ReadOptional(path)
	switch {
	case errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.EOPNOTSUPP):
		// A device being unregistered (EINVAL) or without NAPI.
		return false, nil
	case err != nil:
		return false, kernfs.FileErr(path, err)
	case !ok:
		return false, nil
	}
	if _, err := strconv.Atoi(s); err != nil {
		return false, kernfs.Malformed(path, "threaded %s is not a number", kernfs.Quote(s))
	}
	return s != "0", nil
}

// napiThread reads thread t's name and affinity from /proc/PID/status;
// false when it exited. One that cannot be read is kept with Err.
func (fsys FS) napiThread(kr *kernfs.Reader, t napi.Thread) (NAPIThread, bool) {
	th := NAPIThread{Interface: t.Iface, PID: t.PID, NAPIID: t.NAPIID, IRQ: t.IRQ, Queue: t.Queue, Kind: t.Kind, Source: t.Source}
	path := filepath.Join(fsys.Proc, strconv.Itoa(t.PID), "status")
	b, err := kr.Read(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return th, false
	}
	if err != nil {
		th.Err = kernfs.FileErr(path, err)
		return th, true
	}
	th.Comm, th.Affinity, th.Err = parseStatus(path, b)
	if th.Err == nil && !strings.HasPrefix(th.Comm, "napi/") {
		// napi-get's pid is the initial namespace's, not ours.
		th.Err = fmt.Errorf("%s: pid %d is %s here, not a NAPI kthread (a pid from another pid namespace?)", path, t.PID, kernfs.Quote(th.Comm))
	}
	return th, true
}

// parseStatus returns Name and Cpus_allowed_list of /proc/PID/status.
func parseStatus(path string, b []byte) (string, cpumask.Mask, error) {
	var (
		name    string
		allowed []byte
	)
	for line := range bytes.Lines(b) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		switch string(k) {
		case "Name":
			name = string(bytes.TrimSpace(v))
		case "Cpus_allowed_list":
			allowed = bytes.TrimSpace(v)
		}
	}
	if name == "" || allowed == nil {
		return name, cpumask.Mask{}, kernfs.Malformed(path, "no Name or Cpus_allowed_list")
	}
	m, err := cpumask.ParseList(string(allowed))
	if err != nil {
		return name, cpumask.Mask{}, fmt.Errorf("read %s: Cpus_allowed_list: %w", path, err)
	}
	return name, m, nil
}

// Netdev is the kernel's netdev netlink family (netdev.Kernel on a
// host): queue-get links each queue to a NAPI, napi-get each NAPI to its
// IRQ and kthread (6.8+).
type Netdev interface {
	Queues() ([]netdev.Queue, error)
	NAPIs() ([]netdev.NAPI, error)
}

// oneNAPIDump is a Netdev that dumps napi-get at most once per read.
type oneNAPIDump struct {
	Netdev
	napis  []netdev.NAPI
	err    error
	dumped bool
}

func (o *oneNAPIDump) NAPIs() ([]netdev.NAPI, error) {
	if !o.dumped {
		o.napis, o.err = o.Netdev.NAPIs()
		o.dumped = true
	}
	return o.napis, o.err
}

// readNetQueues fills each device's NetQueues from fsys.Netdev (nil:
// none). A kernel without the family leaves them empty quietly; any
// other error is the devices' NetQueuesErr. The IRQ names decide then.
func (fsys FS) readNetQueues(kr *kernfs.Reader, devs []Device) {
	if fsys.Netdev == nil {
		return
	}
	type owner struct {
		dev   int
		iface string
	}
	byIndex := map[int]owner{}
	for i := range devs {
		devs[i].NetQueues, devs[i].NetQueuesErr = nil, nil
		for _, name := range devs[i].Interfaces {
			idx, err := fsys.ifindex(kr, name)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				continue // removed since the interfaces were listed
			case err != nil:
				devs[i].NetQueuesErr = errors.Join(devs[i].NetQueuesErr, err)
				continue
			}
			byIndex[idx] = owner{i, name}
		}
	}
	if len(byIndex) == 0 {
		return
	}
	queues, err := fsys.Netdev.Queues()
	var napis []netdev.NAPI
	if err == nil {
		napis, err = fsys.Netdev.NAPIs()
	}
	switch {
	case err != nil && netdev.Unavailable(err):
		return
	case err != nil:
		for _, o := range byIndex {
			devs[o.dev].NetQueuesErr = errors.Join(devs[o.dev].NetQueuesErr, err)
		}
		return
	}
	irqOf := make(map[int]int, len(napis))
	for _, n := range napis {
		if n.IRQ >= 0 {
			irqOf[n.ID] = n.IRQ
		}
	}
	for _, q := range queues {
		o, ok := byIndex[q.Ifindex]
		irq, linked := irqOf[q.NAPI]
		if !ok || q.NAPI < 0 || !linked {
			continue
		}
		d := &devs[o.dev]
		if !slices.Contains(d.IRQs, irq) {
			continue // an IRQ of another device: not this one's to place
		}
		if d.NetQueues == nil {
			d.NetQueues = map[int]NetQueue{}
		}
		nq, seen := d.NetQueues[irq]
		if !seen || q.ID < nq.Queue {
			nq.Interface, nq.Queue = o.iface, q.ID
		}
		if i, found := slices.BinarySearch(nq.IDs, q.ID); !found {
			nq.IDs = slices.Insert(nq.IDs, i, q.ID)
		}
		switch q.Type {
		case netdev.QueueRX:
			nq.RX = true
		case netdev.QueueTX:
			nq.TX = true
		}
		d.NetQueues[irq] = nq
	}
}

// ifindex reads /sys/class/net/name/ifindex.
func (fsys FS) ifindex(kr *kernfs.Reader, name string) (int, error) {
	path := filepath.Join(fsys.Sys, "class", "net", name, "ifindex")
	b, err := kr.Read(path)
	if err != nil {
		return 0, kernfs.FileErr(path, err)
	}
	n, err := strconv.Atoi(string(b))
	if err != nil || n <= 0 {
		return 0, kernfs.Malformed(path, "ifindex %s is not a positive number", kernfs.Quote(b))
	}
	return n, nil
}
