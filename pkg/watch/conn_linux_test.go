package watch

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"golang.org/x/sys/unix"
)

// linkMsg builds an RTM_NEWLINK/RTM_DELLINK message as the kernel sends
// it: nlmsghdr, ifinfomsg, IFLA_IFNAME (if name is set) and an
// IFLA_MTU, each padded to 4 bytes.
func linkMsg(typ uint16, index int32, flags uint32, name string) []byte {
	var attrs []byte
	attr := func(t uint16, data []byte) {
		a := make([]byte, unix.SizeofRtAttr, nlAlign(unix.SizeofRtAttr+len(data)))
		binary.NativeEndian.PutUint16(a[0:], uint16(unix.SizeofRtAttr+len(data)))
		binary.NativeEndian.PutUint16(a[2:], t)
		a = append(a, data...)
		attrs = append(attrs, a[:cap(a)]...)
	}
	if name != "" {
		attr(unix.IFLA_IFNAME, append([]byte(name), 0))
	}
	attr(unix.IFLA_MTU, binary.NativeEndian.AppendUint32(nil, 1500))
	b := make([]byte, unix.SizeofNlMsghdr+unix.SizeofIfInfomsg)
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)+len(attrs)))
	binary.NativeEndian.PutUint16(b[4:], typ)
	binary.NativeEndian.PutUint32(b[12:], 4242) // nlmsg_pid of the requester: not checked
	ifi := b[unix.SizeofNlMsghdr:]
	ifi[0] = unix.AF_UNSPEC
	binary.NativeEndian.PutUint16(ifi[2:], unix.ARPHRD_ETHER)
	binary.NativeEndian.PutUint32(ifi[4:], uint32(index))
	binary.NativeEndian.PutUint32(ifi[8:], flags)
	return append(b, attrs...)
}

func TestParseLinkMessages(t *testing.T) {
	up := uint32(unix.IFF_UP | unix.IFF_RUNNING | unix.IFF_LOWER_UP)
	done := make([]byte, unix.SizeofNlMsghdr+4)
	binary.NativeEndian.PutUint32(done, uint32(len(done)))
	binary.NativeEndian.PutUint16(done[4:], unix.NLMSG_DONE)
	tests := []struct {
		name string
		in   []byte
		want []LinkEvent
	}{
		{"up", linkMsg(unix.RTM_NEWLINK, 2, up, "eth0"), []LinkEvent{{Index: 2, Name: "eth0", Up: true}}},
		{"down", linkMsg(unix.RTM_NEWLINK, 2, unix.IFF_BROADCAST, "eth0"), []LinkEvent{{Index: 2, Name: "eth0"}}},
		{"deleted", linkMsg(unix.RTM_DELLINK, 7, 0, "enp65s0"), []LinkEvent{{Index: 7, Name: "enp65s0", Deleted: true}}},
		{"no name", linkMsg(unix.RTM_NEWLINK, 3, up, ""), []LinkEvent{{Index: 3, Up: true}}},
		{"two in one datagram and a done",
			append(append(linkMsg(unix.RTM_NEWLINK, 1, up, "lo"), linkMsg(unix.RTM_DELLINK, 9, 0, "dummy0")...), done...),
			[]LinkEvent{{Index: 1, Name: "lo", Up: true}, {Index: 9, Name: "dummy0", Deleted: true}}},
		{"other type skipped", linkMsg(unix.RTM_NEWADDR, 1, 0, "x"), nil},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLinkMessages(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("event %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestParseLinkMessagesMalformed(t *testing.T) {
	good := linkMsg(unix.RTM_NEWLINK, 2, unix.IFF_UP, "eth0")
	short := func(n uint32) []byte {
		b := append([]byte(nil), good...)
		binary.NativeEndian.PutUint32(b, n)
		return b
	}
	badAttr := append([]byte(nil), good...)
	binary.NativeEndian.PutUint16(badAttr[unix.SizeofNlMsghdr+unix.SizeofIfInfomsg:], 200)
	noIfi := good[:unix.SizeofNlMsghdr+8]
	binary.NativeEndian.PutUint32(noIfi, uint32(len(noIfi)))
	for name, in := range map[string][]byte{
		"length past end":     short(uint32(len(good) + 4)),
		"length below header": short(8),
		"attribute past end":  badAttr,
		"short ifinfomsg":     noIfi,
	} {
		if _, err := ParseLinkMessages(in); !errors.Is(err, kernfs.ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", name, err)
		}
	}
}

func FuzzParseLinkMessages(f *testing.F) {
	f.Add(linkMsg(unix.RTM_NEWLINK, 2, unix.IFF_UP, "eth0"))
	f.Add(append(linkMsg(unix.RTM_NEWLINK, 1, 0, "lo"), linkMsg(unix.RTM_DELLINK, 9, 0, "dummy0")...))
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := ParseLinkMessages(b)
		if err != nil && !errors.Is(err, kernfs.ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
		if len(evs) > len(b)/(unix.SizeofNlMsghdr+unix.SizeofIfInfomsg) {
			t.Fatalf("%d events from %d bytes", len(evs), len(b))
		}
	})
}

// TestAcceptUevent is the trust decision on its own: only port 0 (the
// kernel) with no credentials or uid 0 is accepted.
func TestAcceptUevent(t *testing.T) {
	msg := readUevent(t, "cpu5-offline.uevent")
	tests := []struct {
		name string
		port uint32
		cred *unix.Ucred
		want error // nil: accepted
	}{
		{"kernel with creds", 0, &unix.Ucred{Pid: 0, Uid: 0, Gid: 0}, nil},
		{"kernel without creds", 0, nil, nil},
		{"userspace port", 4321, &unix.Ucred{Pid: 4321, Uid: 0}, ErrNotKernel},
		{"userspace port no creds", 1, nil, ErrNotKernel},
		{"port 0 but uid 1000", 0, &unix.Ucred{Uid: 1000}, ErrNotKernel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := AcceptUevent(tt.port, tt.cred, msg)
			if tt.want == nil {
				if err != nil || u.Subsystem != "cpu" || u.Action != "offline" {
					t.Fatalf("got %+v, %v; want accepted cpu/offline", u, err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := AcceptUevent(0, nil, readUevent(t, "udev-cpu5-offline.udev")); !errors.Is(err, ErrLibudev) {
		t.Errorf("udev message from port 0: err = %v, want ErrLibudev", err)
	}
	if _, err := AcceptUevent(0, nil, []byte("garbage")); !errors.Is(err, kernfs.ErrMalformed) {
		t.Errorf("garbage: err = %v, want ErrMalformed", err)
	}
}

func TestAcceptLink(t *testing.T) {
	msg := linkMsg(unix.RTM_NEWLINK, 2, unix.IFF_UP, "eth0")
	if evs, err := AcceptLink(0, msg); err != nil || len(evs) != 1 || !evs[0].Up {
		t.Errorf("from kernel: %+v, %v", evs, err)
	}
	if _, err := AcceptLink(777, msg); !errors.Is(err, ErrNotKernel) {
		t.Errorf("from port 777: err = %v, want ErrNotKernel", err)
	}
}

func TestParseCred(t *testing.T) {
	oob := unix.UnixCredentials(&unix.Ucred{Pid: 0, Uid: 0, Gid: 0})
	c, err := parseCred(oob)
	if err != nil || c == nil || c.Uid != 0 {
		t.Fatalf("got %+v, %v", c, err)
	}
	oob = unix.UnixCredentials(&unix.Ucred{Pid: 12, Uid: 1000, Gid: 1000})
	if c, err := parseCred(oob); err != nil || c.Uid != 1000 {
		t.Fatalf("got %+v, %v", c, err)
	}
	if c, err := parseCred(unix.UnixRights(0)); err != nil || c != nil {
		t.Fatalf("SCM_RIGHTS only: got %+v, %v", c, err)
	}
}
