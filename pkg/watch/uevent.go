//go:build linux

package watch

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

// Uevent is one kernel uevent (lib/kobject_uevent.c), as broadcast on
// NETLINK_KOBJECT_UEVENT group 1.
type Uevent struct {
	Action    string // "add", "remove", "online", "offline", "bind", ...
	DevPath   string // sysfs path below /sys, e.g. "/devices/system/cpu/cpu5"
	Subsystem string // SUBSYSTEM=, e.g. "cpu"; empty when absent
	Seq       uint64 // SEQNUM=; 0 when absent
	// Env holds every KEY=VALUE field, ACTION, DEVPATH, SUBSYSTEM and
	// SEQNUM included.
	Env map[string]string
}

// libudevPrefix starts every udev rebroadcast (systemd
// src/libsystemd/sd-device/device-monitor.c, monitor_netlink_header).
var libudevPrefix = []byte("libudev\x00")

// ParseUevent parses a kernel uevent: the header "ACTION@DEVPATH\0",
// then NUL-separated KEY=VALUE fields, each split on its first '='
// (MODALIAS values contain '='). It rejects udev messages with
// ErrLibudev and anything else that does not fit with an error wrapping
// kernfs.ErrMalformed. It never panics.
func ParseUevent(b []byte) (Uevent, error) {
	if bytes.HasPrefix(b, libudevPrefix) {
		return Uevent{}, fmt.Errorf("uevent %s: %w", quote(b), ErrLibudev)
	}
	hdr, rest, ok := bytes.Cut(b, []byte{0})
	if !ok {
		return Uevent{}, malformed(b, "header not NUL-terminated")
	}
	action, devpath, ok := bytes.Cut(hdr, []byte{'@'})
	switch {
	case !ok:
		return Uevent{}, malformed(b, "header has no '@'")
	case len(action) == 0:
		return Uevent{}, malformed(b, "empty action")
	case len(devpath) == 0 || devpath[0] != '/':
		return Uevent{}, malformed(b, "devpath does not start with '/'")
	}
	u := Uevent{
		Action:  string(action),
		DevPath: string(devpath),
		Env:     make(map[string]string, 8),
	}
	for field := range bytes.SplitSeq(rest, []byte{0}) {
		if len(field) == 0 {
			continue
		}
		k, v, ok := bytes.Cut(field, []byte{'='})
		if !ok || len(k) == 0 {
			return Uevent{}, malformed(b, fmt.Sprintf("field %q is not KEY=VALUE", field))
		}
		u.Env[string(k)] = string(v)
	}
	if a, ok := u.Env["ACTION"]; ok && a != u.Action {
		return Uevent{}, malformed(b, fmt.Sprintf("ACTION=%q contradicts header", a))
	}
	if p, ok := u.Env["DEVPATH"]; ok && p != u.DevPath {
		return Uevent{}, malformed(b, fmt.Sprintf("DEVPATH=%q contradicts header", p))
	}
	u.Subsystem = u.Env["SUBSYSTEM"]
	if s, ok := u.Env["SEQNUM"]; ok {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return Uevent{}, malformed(b, fmt.Sprintf("SEQNUM=%q is not a number", s))
		}
		u.Seq = n
	}
	return u, nil
}

// interesting lists, per subsystem, the actions that can move IRQs or
// change the CPUs they may use. Such a uevent does not make its trigger
// Fresh, so each must be a change the consumer sees in sysfs and procfs.
var interesting = map[string][]string{
	// CPU hotplug: the kernel migrates (and may break) affinities
	// before the event arrives; add/remove is physical hot-add.
	"cpu": {"online", "offline", "add", "remove"},
	// A node appearing or going away changes the hop distances.
	"node": {"add", "remove", "online", "offline"},
	// Memory blocks: only online/offline, which can change whether a
	// node has memory (N_MEMORY); a hot-add sends one add per block,
	// hundreds on a large machine, that change nothing until onlined.
	"memory": {"online", "offline"},
	// bind means probe finished: drivers such as MANA have requested
	// their queue IRQs by then. unbind/remove free them.
	"pci": {"add", "remove", "bind", "unbind"},
	// A netdev appearing, going or changing namespace.
	"net": {"add", "remove", "move"},
}

// Interesting reports whether u can change IRQ placement: one of the
// actions of its subsystem in interesting.
func Interesting(u Uevent) bool { return slices.Contains(interesting[u.Subsystem], u.Action) }

func malformed(b []byte, why string) error {
	return fmt.Errorf("uevent %s: %w: %s", quote(b), kernfs.ErrMalformed, why)
}

// quote returns b quoted for an error message, cut to a readable length.
func quote(b []byte) string {
	const max = 80
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "..."
	}
	return strconv.Quote(string(b))
}
