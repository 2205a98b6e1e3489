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
	Action    string            // "add", "remove", "online", "offline", "bind", ...
	DevPath   string            // sysfs path below /sys, e.g. "/devices/system/cpu/cpu5"
	Subsystem string            // SUBSYSTEM=, e.g. "cpu"; empty when absent
	Seq       uint64            // SEQNUM=; 0 when absent
	Env       map[string]string // every KEY=VALUE field
}

// libudevPrefix starts every udev rebroadcast (device-monitor.c).
var libudevPrefix = []byte("libudev\x00")

// ParseUevent parses "ACTION@DEVPATH\0" then NUL-separated KEY=VALUE
// fields. Udev messages give ErrLibudev, others that do not fit an
// error wrapping kernfs.ErrMalformed.
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
// change their CPUs, each seen in sysfs and procfs (they are not Fresh).
// Memory add is left out: one per block, nothing changes until online.
var interesting = map[string][]string{
	"cpu":    {"online", "offline", "add", "remove"},
	"node":   {"add", "remove", "online", "offline"},
	"memory": {"online", "offline"},
	"pci":    {"add", "remove", "bind", "unbind"}, // bind: probe finished
	"net":    {"add", "remove", "move"},
}

// Interesting reports whether u can change IRQ placement.
func Interesting(u Uevent) bool { return slices.Contains(interesting[u.Subsystem], u.Action) }

func malformed(b []byte, why string) error {
	return fmt.Errorf("uevent %s: %w: %s", quote(b), kernfs.ErrMalformed, why)
}

// quote returns b quoted and cut to 80 bytes for an error message.
func quote(b []byte) string {
	const max = 80
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "..."
	}
	return strconv.Quote(string(b))
}
