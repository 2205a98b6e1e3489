package napi

import (
	"strconv"
	"strings"
)

// commPrefix starts every NAPI kthread's name, "napi/%s-%d"; commMax is
// the longest comm the kernel keeps (TASK_COMM_LEN - 1). Kernels since
// 5.17 show a kthread's full name in /proc (get_kthread_comm()), so
// only a name of exactly commMax bytes may have been cut.
const (
	commPrefix = "napi/"
	commMax    = 15
)

// matchComm reports whether comm can be "napi/<iface>-<id>" cut to
// commMax bytes, and returns the id, or -1 when the cut may have hit it.
func matchComm(comm, iface string) (id int, ok bool) {
	rest, found := strings.CutPrefix(comm, commPrefix)
	if !found || iface == "" {
		return 0, false
	}
	cut := len(comm) == commMax
	full := iface + "-"
	digits, found := strings.CutPrefix(rest, full)
	switch {
	case !found:
		// The cut fell inside the interface's name or on its dash.
		return -1, cut && strings.HasPrefix(full, rest)
	case strings.TrimLeft(digits, "0123456789") != "":
		return 0, false
	case cut:
		return -1, true
	case digits == "":
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	return n, true
}
