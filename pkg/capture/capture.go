// Package capture writes a machine as numairqd reads it into one archive
// and opens such an archive as roots to read instead, so that a plan can
// be made, or a bug shown, without the machine.
//
// A capture is a gzip'd tar: the files under sys/, proc/ and etc/ at
// their real paths (symlinks as relative symlinks), the netlink answers
// (netlink.json), the config (config.yaml) and a manifest. Write taps
// kernfs while it makes the daemon's reads, so the archive holds exactly
// what the readers read, the bytes they saw, by construction and not by
// a list of paths that would drift from them. Open unpacks an archive
// defensively: it is input from anywhere.
package capture

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/numairqd/numairqd/pkg/inventory"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/machine"
	"github.com/numairqd/numairqd/pkg/netdev"
)

// Format is the archive layout this package writes and reads.
const Format = 1

// Source is what to capture: the roots ("/sys", "/proc", "/etc" on a
// host, or a fixture tree's), the config file numairqd would read (""
// none), the netlink answers (nil: not asked) and numairqd's version.
// A Time, when set, is the capture's instead of now, and took is left
// out: the same tree then gives the same bytes (for files kept in git).
type Source struct {
	Sys, Proc, Etc string
	Config         string
	Netdev         inventory.Netdev // queue-get, napi-get: netdev.Kernel{} on a host
	Queues         load.QueueReader // per-queue counters: load.NewNetCounters on a host
	Version        string
	Time           time.Time
}

// Manifest says what a capture holds and what could not be read.
type Manifest struct {
	Format  int       `json:"format"`
	Version string    `json:"numairqd_version"`
	Kernel  string    `json:"kernel,omitempty"`  // uname release, for a capture of the host
	Machine string    `json:"machine,omitempty"` // uname machine
	Time    time.Time `json:"time"`
	Root    bool      `json:"root"`
	Took    float64   `json:"took_seconds"` // the reads
	Files   int       `json:"files"`
	Dirs    int       `json:"dirs"`
	Links   int       `json:"symlinks"`
	Bytes   int64     `json:"bytes"` // of the files
	// ReadErr is why numairqd's read of the machine failed, if it did.
	ReadErr string    `json:"read_error,omitempty"`
	Missing []Missing `json:"missing,omitempty"`
}

// Missing is a path, or a netlink request, that could not be read.
type Missing struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}

// Replay is an opened capture: roots to read and the recorded answers.
type Replay struct {
	Manifest Manifest
	Roots    machine.Roots    // in the unpacked tree; Netdev nil when none recorded
	Queues   load.QueueReader // nil when none recorded
	Config   string           // the captured config file, "" if none
	dir      string
}

// Close removes the unpacked tree.
func (r *Replay) Close() error { return os.RemoveAll(r.dir) }

// netlink is netlink.json. With nd or q set it records their answers,
// else it replays the recorded ones: an inventory.Netdev and a
// load.QueueReader either way.
type netlink struct {
	QueueGet *answer[[]netdev.Queue] `json:"queue_get,omitempty"`
	NAPIGet  *answer[[]netdev.NAPI]  `json:"napi_get,omitempty"`
	Counters *answer[queueCounts]    `json:"queue_counters,omitempty"`
	nd       inventory.Netdev
	q        load.QueueReader
	missing  *[]Missing
}

type queueCounts struct {
	Sources map[string]string
	Counts  []load.QueueCount
}

// answer is one recorded netlink answer, the error as text.
type answer[T any] struct {
	Answer      T      `json:"answer"`
	Err         string `json:"error,omitempty"`
	Unavailable bool   `json:"unavailable,omitempty"` // netdev.Unavailable(error)
}

func (n *netlink) Queues() ([]netdev.Queue, error) {
	if n.nd != nil {
		q, err := n.nd.Queues()
		n.QueueGet = record(n, "queue-get", q, err)
	}
	return n.QueueGet.get()
}

func (n *netlink) NAPIs() ([]netdev.NAPI, error) {
	if n.nd != nil {
		napis, err := n.nd.NAPIs()
		n.NAPIGet = record(n, "napi-get", napis, err)
	}
	return n.NAPIGet.get()
}

func (n *netlink) ReadQueues() load.QueueCounts {
	if n.q != nil {
		c := n.q.ReadQueues()
		n.Counters = record(n, "queue counters", queueCounts{c.Sources, c.Counts}, c.Err)
	}
	c, err := n.Counters.get()
	return load.QueueCounts{Sources: c.Sources, Counts: c.Counts, Err: err}
}

// record keeps an answer, its error also in the manifest's Missing.
func record[T any](n *netlink, what string, v T, err error) *answer[T] {
	a := &answer[T]{Answer: v}
	if err != nil {
		a.Err, a.Unavailable = err.Error(), netdev.Unavailable(err)
		*n.missing = append(*n.missing, Missing{"netlink " + what, a.Err})
	}
	return a
}

// get replays the answer; one never asked is a kernel without it. An
// unavailable one wraps EOPNOTSUPP for netdev.Unavailable.
func (a *answer[T]) get() (T, error) {
	if a == nil {
		a = &answer[T]{Err: "not asked when captured", Unavailable: true}
	}
	switch {
	case a.Unavailable:
		return a.Answer, fmt.Errorf("%s (%w)", a.Err, syscall.EOPNOTSUPP)
	case a.Err != "":
		return a.Answer, errors.New(a.Err)
	}
	return a.Answer, nil
}
