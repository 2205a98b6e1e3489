package netdev

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/nl"
)

// fakeDump replaces dumpGeneric until the test ends: it checks the
// request and answers replies, err.
func fakeDump(t *testing.T, wantCmd uint8, wantReq []byte, replies [][]byte, err error) {
	t.Helper()
	old := dumpGeneric
	t.Cleanup(func() { dumpGeneric = old })
	dumpGeneric = func(family string, cmd, version uint8, req []byte, max int, timeout time.Duration) ([][]byte, error) {
		if family != "netdev" || cmd != wantCmd || version != 1 || string(req) != string(wantReq) || max != MaxReplies || timeout != Timeout {
			t.Errorf("dump %q cmd %d version %d req % x max %d timeout %v; want netdev cmd %d version 1 req % x",
				family, cmd, version, req, max, timeout, wantCmd, wantReq)
		}
		return replies, err
	}
}

func TestDumpQueues(t *testing.T) {
	fakeDump(t, cmdQueueGet, nil, [][]byte{queueReply(0, 0, 2, 8193), queueReply(0, 2, 2), queueReply(0, 1, 2)}, nil)
	got, err := DumpQueues()
	want := []Queue{{Ifindex: 2, Type: QueueRX, NAPI: 8193}, {Ifindex: 2, Type: QueueTX, NAPI: -1}}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v, %v; want %+v (the later queue type skipped)", got, err, want)
	}
}

// qstats-get asks for scope queue: NETDEV_A_QSTATS_SCOPE (4) = 1, a u32.
func TestDumpQStatsRequest(t *testing.T) {
	req := []byte{8, 0, 4, 0, 1, 0, 0, 0}
	fakeDump(t, cmdQStatsGet, req, [][]byte{statsReply(4, 0, 0, attr(attrQStatsRXPackets, u32(1)), attr(attrQStatsRXBytes, u32(60)))}, nil)
	got, err := DumpQStats()
	if err != nil || len(got) != 1 || got[0] != (Stats{Ifindex: 4, Packets: 1, Bytes: 60}) {
		t.Errorf("got %+v, %v", got, err)
	}
}

// A dump the kernel ends with an errno fails, with nothing.
func TestDumpEndedByKernel(t *testing.T) {
	fakeDump(t, cmdNAPIGet, nil, nil, fmt.Errorf("dump: %w", syscall.ENOMEM))
	if got, err := DumpNAPIs(); !errors.Is(err, syscall.ENOMEM) || got != nil || Unavailable(err) {
		t.Errorf("ENOMEM: %+v, %v; want the error and nothing", got, err)
	}
}

func TestDumpErrors(t *testing.T) {
	fakeDump(t, cmdQueueGet, nil, nil, fmt.Errorf("genl netdev: family %q: %w", "netdev", nl.ErrNoFamily))
	if _, err := DumpQueues(); !Unavailable(err) || !strings.Contains(err.Error(), "netdev queue-get") {
		t.Errorf("no family: %v; want Unavailable, naming queue-get", err)
	}
	fakeDump(t, cmdQueueGet, nil, nil, errors.New("genl netdev: dump 10: more than 65536 replies"))
	if _, err := DumpQueues(); err == nil || Unavailable(err) {
		t.Errorf("too many replies: %v; want an error, not Unavailable", err)
	}
	bad := [][]byte{queueReply(0, 0, 2), queueReply(1, 0, 0)}
	fakeDump(t, cmdQueueGet, nil, bad, nil)
	if got, err := DumpQueues(); !errors.Is(err, kernfs.ErrMalformed) || got != nil || !strings.Contains(err.Error(), "reply 1:") {
		t.Errorf("malformed second reply: %+v, %v; want ErrMalformed naming reply 1", got, err)
	}
}

func TestUnavailable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("x: %w", nl.ErrNoFamily), true},
		{fmt.Errorf("dump: %w", os.NewSyscallError("dump", syscall.EOPNOTSUPP)), true},
		{fmt.Errorf("dump: %w", syscall.EINVAL), true},
		{fmt.Errorf("dump: %w", syscall.EPERM), false},
		{fmt.Errorf("dump: %w", kernfs.ErrMalformed), false},
		{nil, false},
	} {
		if got := Unavailable(c.err); got != c.want {
			t.Errorf("Unavailable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
