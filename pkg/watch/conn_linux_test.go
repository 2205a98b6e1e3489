package watch

import (
	"encoding/binary"
	"errors"
	"slices"
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
		a := make([]byte, unix.SizeofRtAttr, (unix.SizeofRtAttr+len(data)+3)&^3)
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

// TestParseUeventFiles: a kernel uevent parses, a udev rebroadcast is
// ErrLibudev and garbage ErrMalformed.
func TestParseUeventFiles(t *testing.T) {
	if u, err := ParseUevent(readUevent(t, "cpu5-offline.uevent")); err != nil || u.Subsystem != "cpu" || u.Action != "offline" {
		t.Errorf("got %+v, %v; want cpu/offline", u, err)
	}
	if _, err := ParseUevent(readUevent(t, "udev-cpu5-offline.udev")); !errors.Is(err, ErrLibudev) {
		t.Errorf("udev message: err = %v, want ErrLibudev", err)
	}
	if _, err := ParseUevent([]byte("garbage")); !errors.Is(err, kernfs.ErrMalformed) {
		t.Errorf("garbage: err = %v, want ErrMalformed", err)
	}
}

// countGenl counts the family's messages with one of the commands.
func TestCountGenl(t *testing.T) {
	msg := func(typ uint16, cmd uint8) []byte {
		b := make([]byte, unix.SizeofNlMsghdr+4)
		binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
		binary.NativeEndian.PutUint16(b[4:], typ)
		b[unix.SizeofNlMsghdr] = cmd
		return b
	}
	b := slices.Concat(msg(30, unix.ETHTOOL_MSG_CHANNELS_NTF), msg(30, unix.ETHTOOL_MSG_RINGS_NTF), msg(31, unix.ETHTOOL_MSG_CHANNELS_NTF))
	if n, err := countGenl(b, 30, unix.ETHTOOL_MSG_CHANNELS_NTF); n != 1 || err != nil {
		t.Errorf("got %d, %v; want 1 (one other command, one other family)", n, err)
	}
	if n, err := countGenl(msg(30, 2)[:unix.SizeofNlMsghdr+2], 30, 2); !errors.Is(err, kernfs.ErrMalformed) {
		t.Errorf("cut message: got %d, %v; want ErrMalformed", n, err)
	}
	short := msg(30, 2)
	binary.NativeEndian.PutUint32(short[0:], unix.SizeofNlMsghdr+2)
	if n, err := countGenl(append(short[:unix.SizeofNlMsghdr+2], 0, 0), 30, 2); !errors.Is(err, kernfs.ErrMalformed) {
		t.Errorf("short genlmsghdr: got %d, %v; want ErrMalformed", n, err)
	}
}
