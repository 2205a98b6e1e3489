package watch

import (
	"encoding/binary"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"golang.org/x/sys/unix"
)

// nlMsg frames payload as one netlink message.
func nlMsg(typ uint16, seq uint32, payload []byte) []byte {
	n := unix.SizeofNlMsghdr + len(payload)
	b := make([]byte, unix.SizeofNlMsghdr, nlAlign(n))
	binary.NativeEndian.PutUint32(b[0:], uint32(n))
	binary.NativeEndian.PutUint16(b[4:], typ)
	binary.NativeEndian.PutUint32(b[8:], seq)
	b = append(b, payload...)
	return b[:nlAlign(n)]
}

func TestDumpRequest(t *testing.T) {
	attrs := AppendAttrU32(nil, 1, 2)
	b := dumpRequest(30, 11, 1, attrs, 2)
	if len(b) != 16+4+8 || binary.NativeEndian.Uint32(b) != uint32(len(b)) ||
		binary.NativeEndian.Uint16(b[4:]) != 30 ||
		binary.NativeEndian.Uint16(b[6:]) != unix.NLM_F_REQUEST|unix.NLM_F_DUMP ||
		binary.NativeEndian.Uint32(b[8:]) != 2 || b[16] != 11 || b[17] != 1 {
		t.Errorf("request % x", b)
	}
}

func TestParseDumpReplies(t *testing.T) {
	const fam, seq = 30, 2
	genl := func(attrs ...byte) []byte { return append([]byte{11, 1, 0, 0}, attrs...) }
	a1, a2 := AppendAttrU32(nil, 2, 8193), AppendAttrU32(nil, 2, 8194)
	var dgram []byte
	dgram = append(dgram, nlMsg(fam, seq, genl(a1...))...)
	dgram = append(dgram, nlMsg(fam, seq+5, genl(a1...))...) // another request's
	dgram = append(dgram, nlMsg(fam, seq, genl(a2...))...)
	var replies [][]byte
	done, err := parseDumpReplies(dgram, fam, seq, &replies)
	if err != nil || done || len(replies) != 2 || string(replies[0]) != string(a1) || string(replies[1]) != string(a2) {
		t.Fatalf("got %d replies, done %v, err %v", len(replies), done, err)
	}
	done, err = parseDumpReplies(nlMsg(unix.NLMSG_DONE, seq, make([]byte, 4)), fam, seq, &replies)
	if err != nil || !done || len(replies) != 2 {
		t.Errorf("NLMSG_DONE: done %v, err %v", done, err)
	}
	code := -int32(unix.EOPNOTSUPP)
	eopnotsupp := binary.NativeEndian.AppendUint32(nil, uint32(code))
	for _, typ := range []uint16{unix.NLMSG_ERROR, unix.NLMSG_DONE} {
		done, err = parseDumpReplies(nlMsg(typ, seq, eopnotsupp), fam, seq, &replies)
		if !done || !errors.Is(err, syscall.EOPNOTSUPP) {
			t.Errorf("type %d with -EOPNOTSUPP: done %v, err %v", typ, done, err)
		}
	}
	if _, err := parseDumpReplies(nlMsg(fam, seq, []byte{11}), fam, seq, &replies); !errors.Is(err, kernfs.ErrMalformed) {
		t.Errorf("short genlmsghdr: %v", err)
	}
	if _, err := parseDumpReplies(nlMsg(unix.NLMSG_ERROR, seq, []byte{1}), fam, seq, &replies); !errors.Is(err, kernfs.ErrMalformed) {
		t.Errorf("short nlmsgerr: %v", err)
	}
}

// TestDumpGenericLive asks this machine's netdev family for a queue-get
// dump (a read that changes nothing) with a cap of one reply, and for
// the queues of an ifindex that does not exist; skips before 6.8.
func TestDumpGenericLive(t *testing.T) {
	const queueGet = 10 // NETDEV_CMD_QUEUE_GET, include/uapi/linux/netdev.h
	all, err := DumpGeneric("netdev", queueGet, 1, nil, 1<<16, 5*time.Second)
	if errors.Is(err, ErrNoFamily) || errors.Is(err, syscall.EOPNOTSUPP) {
		t.Skipf("no queue-get here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("queue-get: %d replies", len(all))
	if len(all) > 1 {
		if got, err := DumpGeneric("netdev", queueGet, 1, nil, 1, 5*time.Second); err == nil || got != nil || !strings.Contains(err.Error(), "more than 1 replies") {
			t.Errorf("cap of 1: %d replies, %v; want none and the cap named", len(got), err)
		}
	}
	// NETDEV_A_QUEUE_IFINDEX (2) of a device that is not there.
	got, err := DumpGeneric("netdev", queueGet, 1, AppendAttrU32(nil, 2, 1<<30), 1<<16, 5*time.Second)
	if !errors.Is(err, syscall.ENODEV) || len(got) != 0 {
		t.Errorf("ifindex 1<<30: %d replies, %v; want ENODEV", len(got), err)
	}
}
