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
	// MaxReplies bounds the replies of one dump; more is an error.
	MaxReplies = 1 << 16
)

// Kernel asks the running kernel, one bounded dump a call.
type Kernel struct{}

// Queues dumps queue-get.
func (Kernel) Queues() ([]Queue, error) { return DumpQueues() }

// NAPIs dumps napi-get.
func (Kernel) NAPIs() ([]NAPI, error) { return DumpNAPIs() }

// DumpQueues dumps queue-get: each up interface's RX then TX queues.
func DumpQueues() ([]Queue, error) {
	return dump("queue-get", cmdQueueGet, nil, parseQueue)
}

// DumpNAPIs dumps napi-get: each NAPI with an id, its IRQ and kthread.
func DumpNAPIs() ([]NAPI, error) {
	return dump("napi-get", cmdNAPIGet, nil, parseNAPI)
}

// DumpQStats dumps qstats-get of scope queue: per-queue counters.
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
// the family (ErrNoFamily) or the command (EOPNOTSUPP, EINVAL).
func Unavailable(err error) bool {
	return errors.Is(err, nl.ErrNoFamily) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EINVAL)
}

// dumpGeneric is nl.Dump; tests give fakes.
var dumpGeneric = nl.Dump

// dump runs cmd with request req and parses each reply (ok false: skip).
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
