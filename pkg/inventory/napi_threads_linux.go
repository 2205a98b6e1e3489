package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/napi"
)

// readNAPI fills each device's NAPI with its threaded interfaces'
// kthreads. Only /sys/class/net/IF/threaded is read per interface; /proc
// is scanned only when one of them is on, once for all. napi-get is
// asked only through fsys.Netdev, which the command sets at the host's
// roots alone. An interface whose threaded cannot be read, and a failed
// search, are in the device's NAPI.Err.
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
		mine := map[string]bool{}
		for _, n := range d.NAPI.Threaded {
			mine[n] = true
		}
		for _, t := range res.Threads {
			if !mine[t.Iface] {
				continue
			}
			if th, ok := fsys.napiThread(kr, t); ok {
				d.NAPI.Threads = append(d.NAPI.Threads, th)
			}
		}
		for _, u := range res.Unresolved {
			for _, n := range u.Ifaces {
				if mine[n] {
					d.NAPI.Unresolved = append(d.NAPI.Unresolved, NAPIUnresolved{PID: u.PID, Comm: u.Comm, Interfaces: u.Ifaces})
					break
				}
			}
		}
	}
}

// isThreaded reads /sys/class/net/name/threaded (5.12+): any value
// but 0 is on. A missing file (an older kernel, a removed interface)
// or one the kernel refuses to show is off.
func (fsys FS) isThreaded(kr *kernfs.Reader, name string) (bool, error) {
	path := filepath.Join(fsys.Sys, "class", "net", name, "threaded")
	s, ok, err := kr.ReadOptional(path)
	switch {
	case errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.EOPNOTSUPP):
		// threaded_show refuses a device being unregistered (EINVAL);
		// EOPNOTSUPP is the store's answer for one without NAPI.
		return false, nil
	case err != nil:
		return false, fileErr(path, err)
	case !ok:
		return false, nil
	}
	if _, err := strconv.Atoi(s); err != nil {
		return false, kernfs.Malformed(path, "threaded %s is not a number", kernfs.Quote(s))
	}
	return s != "0", nil
}

// napiThread reads thread t's name and affinity from /proc/PID/status;
// ok is false when it exited meanwhile. A thread whose status cannot be
// read or parsed is kept with Err.
func (fsys FS) napiThread(kr *kernfs.Reader, t napi.Thread) (NAPIThread, bool) {
	th := NAPIThread{Interface: t.Iface, PID: t.PID, NAPIID: t.NAPIID, IRQ: t.IRQ, Queue: t.Queue, Kind: t.Kind, Source: t.Source}
	path := filepath.Join(fsys.Proc, strconv.Itoa(t.PID), "status")
	b, err := kr.Read(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return th, false
	}
	if err != nil {
		th.Err = fileErr(path, err)
		return th, true
	}
	th.Comm, th.Affinity, th.Err = parseStatus(path, b)
	if th.Err == nil && !strings.HasPrefix(th.Comm, "napi/") {
		// napi-get's pids are the initial namespace's on kernels that
		// do not translate them: in a container's namespace the pid
		// names another task.
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
