package inventory

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/netdev"
)

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
