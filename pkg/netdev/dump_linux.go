package netdev

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/mdlayher/netlink"

	"github.com/numairqd/numairqd/pkg/nl"
)

const (
	// Timeout bounds one dump, the family lookup included.
	Timeout = 5 * time.Second
	// MaxReplies bounds the replies of one dump: 32768 queues of each
	// direction. A host past it gets an error, not a partial answer.
	MaxReplies = 1 << 16
)

// Kernel asks the running kernel (the inventory's Netdev on a host):
// each call is one bounded dump.
type Kernel struct{}

// Queues dumps queue-get.
func (Kernel) Queues() ([]Queue, error) { return DumpQueues() }

// NAPIs dumps napi-get.
func (Kernel) NAPIs() ([]NAPI, error) { return DumpNAPIs() }

// DumpQueues runs the queue-get dump for every interface that is up:
// its configured RX then TX queues, each with the NAPI that serves it
// where the driver says (6.8+).
func DumpQueues() ([]Queue, error) {
	return dump("queue-get", cmdQueueGet, nil, parseQueue)
}

// DumpNAPIs runs the napi-get dump for every interface that is up: each
// NAPI with an id, its IRQ and its kthread (6.8+).
func DumpNAPIs() ([]NAPI, error) {
	return dump("napi-get", cmdNAPIGet, nil, parseNAPI)
}

// DumpQStats runs the qstats-get dump of scope queue (6.9+): the
// counters of each queue of every interface that is up whose driver
// keeps per-queue counters.
func DumpQStats() ([]Stats, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(attrQStatsScope, qstatsScopeQueue)
	req, err := ae.Encode()
	if err != nil {
		return nil, fmt.Errorf("netdev qstats-get: %w", err)
	}
	return dump("qstats-get", cmdQStatsGet, req, parseStats)
}

// Unavailable reports whether err from a dump means a kernel without
// the command: no "netdev" family (before 6.3, ErrNoFamily), or a
// family that does not know it (EOPNOTSUPP for an unknown command,
// EINVAL for an attribute past its policy). Callers fall back quietly.
func Unavailable(err error) bool {
	return errors.Is(err, nl.ErrNoFamily) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EINVAL)
}

// dumpGeneric is nl.Dump; tests give fakes.
var dumpGeneric = nl.Dump

// dump runs command cmd of the family with the request attributes req
// and parses each reply with parse, which may skip one (ok false).
func dump[T any](what string, cmd uint8, req []byte, parse func([]byte) (T, bool, error)) ([]T, error) {
	replies, err := dumpGeneric(familyName, cmd, familyVersion, req, MaxReplies, Timeout)
	if err != nil {
		return nil, fmt.Errorf("netdev %s: %w", what, err)
	}
	out := make([]T, 0, len(replies))
	for i, b := range replies {
		v, ok, err := parse(b)
		if err != nil {
			return nil, fmt.Errorf("netdev %s: reply %d: %w", what, i, err)
		}
		if ok {
			out = append(out, v)
		}
	}
	return out, nil
}
