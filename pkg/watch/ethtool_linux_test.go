package watch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"golang.org/x/sys/unix"
)

// testFamily is an ethtool family id as nlctrl hands them out (ids
// from GENL_START_ALLOC, 0x13, up).
const testFamily = 0x14

// nlattr builds one netlink attribute, padded to 4 bytes.
func nlattr(typ uint16, data []byte) []byte {
	n := unix.SizeofNlAttr + len(data)
	a := make([]byte, unix.SizeofNlAttr, nlAlign(n))
	binary.NativeEndian.PutUint16(a[0:], uint16(n))
	binary.NativeEndian.PutUint16(a[2:], typ)
	a = append(a, data...)
	return a[:cap(a)]
}

// nest builds a nested attribute of the given attributes, with
// NLA_F_NESTED set as nla_nest_start does.
func nest(typ uint16, attrs ...[]byte) []byte {
	return nlattr(typ|unix.NLA_F_NESTED, slices.Concat(attrs...))
}

func u32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }

// genlMsg builds a generic netlink message of type family and command
// cmd, as genlmsg_put does; the nlmsg_pid is the requester's.
func genlMsg(family uint16, cmd uint8, seq uint32, attrs ...[]byte) []byte {
	body := slices.Concat(attrs...)
	b := make([]byte, unix.SizeofNlMsghdr+genlHdrLen, unix.SizeofNlMsghdr+genlHdrLen+len(body))
	binary.NativeEndian.PutUint32(b[0:], uint32(cap(b)))
	binary.NativeEndian.PutUint16(b[4:], family)
	binary.NativeEndian.PutUint32(b[8:], seq)
	binary.NativeEndian.PutUint32(b[12:], 4242)
	b[unix.SizeofNlMsghdr], b[unix.SizeofNlMsghdr+1] = cmd, 1
	return append(b, body...)
}

// channelsNtf builds an ETHTOOL_MSG_CHANNELS_NTF as
// ethnl_channels_fill_reply sends it: the header, then the maxima and
// counts of combined channels.
func channelsNtf(index uint32, name string, combined uint32) []byte {
	return genlMsg(testFamily, unix.ETHTOOL_MSG_CHANNELS_NTF, 0,
		nest(unix.ETHTOOL_A_CHANNELS_HEADER,
			nlattr(unix.ETHTOOL_A_HEADER_DEV_INDEX, u32(index)),
			nlattr(unix.ETHTOOL_A_HEADER_DEV_NAME, append([]byte(name), 0))),
		nlattr(unix.ETHTOOL_A_CHANNELS_COMBINED_MAX, u32(8)),
		nlattr(unix.ETHTOOL_A_CHANNELS_COMBINED_COUNT, u32(combined)))
}

func TestParseEthtoolMessages(t *testing.T) {
	done := make([]byte, unix.SizeofNlMsghdr+4)
	binary.NativeEndian.PutUint32(done, uint32(len(done)))
	binary.NativeEndian.PutUint16(done[4:], unix.NLMSG_DONE)
	veth := genlMsg(testFamily, unix.ETHTOOL_MSG_CHANNELS_NTF, 0,
		nest(unix.ETHTOOL_A_CHANNELS_HEADER, nlattr(unix.ETHTOOL_A_HEADER_DEV_INDEX, u32(5)),
			nlattr(unix.ETHTOOL_A_HEADER_DEV_NAME, []byte("veth0\x00"))),
		nlattr(unix.ETHTOOL_A_CHANNELS_RX_MAX, u32(4)), nlattr(unix.ETHTOOL_A_CHANNELS_TX_MAX, u32(4)),
		nlattr(unix.ETHTOOL_A_CHANNELS_RX_COUNT, u32(2)), nlattr(unix.ETHTOOL_A_CHANNELS_TX_COUNT, u32(3)),
		nlattr(unix.ETHTOOL_A_CHANNELS_OTHER_COUNT, u32(1)))
	rings := genlMsg(testFamily, unix.ETHTOOL_MSG_RINGS_NTF, 0,
		nest(unix.ETHTOOL_A_RINGS_HEADER, nlattr(unix.ETHTOOL_A_HEADER_DEV_INDEX, u32(2))),
		nlattr(unix.ETHTOOL_A_RINGS_RX, u32(1024)))
	tests := []struct {
		name string
		in   []byte
		want []ChannelsEvent
	}{
		{"combined", channelsNtf(2, "eth0", 3), []ChannelsEvent{{Index: 2, Name: "eth0", Combined: 3}}},
		{"rx tx other", veth, []ChannelsEvent{{Index: 5, Name: "veth0", RX: 2, TX: 3, Other: 1}}},
		{"index only", genlMsg(testFamily, unix.ETHTOOL_MSG_CHANNELS_NTF, 0,
			nest(unix.ETHTOOL_A_CHANNELS_HEADER, nlattr(unix.ETHTOOL_A_HEADER_DEV_INDEX, u32(7)))),
			[]ChannelsEvent{{Index: 7}}},
		{"name only, no NUL", genlMsg(testFamily, unix.ETHTOOL_MSG_CHANNELS_NTF, 0,
			nest(unix.ETHTOOL_A_CHANNELS_HEADER, nlattr(unix.ETHTOOL_A_HEADER_DEV_NAME, []byte("ens1f0")))),
			[]ChannelsEvent{{Name: "ens1f0"}}},
		{"unknown attributes skipped", genlMsg(testFamily, unix.ETHTOOL_MSG_CHANNELS_NTF, 0,
			nlattr(99, []byte{1, 2, 3}),
			nest(unix.ETHTOOL_A_CHANNELS_HEADER, nlattr(unix.ETHTOOL_A_HEADER_FLAGS, u32(0)), nlattr(unix.ETHTOOL_A_HEADER_DEV_INDEX, u32(3)))),
			[]ChannelsEvent{{Index: 3}}},
		{"two in one datagram and a done", slices.Concat(channelsNtf(2, "eth0", 3), rings, channelsNtf(9, "eth1", 1), done),
			[]ChannelsEvent{{Index: 2, Name: "eth0", Combined: 3}, {Index: 9, Name: "eth1", Combined: 1}}},
		{"rings skipped", rings, nil},
		{"features skipped", genlMsg(testFamily, unix.ETHTOOL_MSG_FEATURES_NTF, 0), nil},
		// The same command number in another family is not ethtool's.
		{"wrong family", genlMsg(testFamily+1, unix.ETHTOOL_MSG_CHANNELS_NTF, 0,
			nest(unix.ETHTOOL_A_CHANNELS_HEADER, nlattr(unix.ETHTOOL_A_HEADER_DEV_INDEX, u32(2)))), nil},
		{"nlctrl message", genlMsg(unix.GENL_ID_CTRL, unix.ETHTOOL_MSG_CHANNELS_NTF, 0), nil},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseEthtoolMessages(tt.in, testFamily)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseEthtoolMessagesMalformed(t *testing.T) {
	good := channelsNtf(2, "eth0", 3)
	withLen := func(n uint32) []byte {
		b := slices.Clone(good)
		binary.NativeEndian.PutUint32(b, n)
		return b
	}
	ntf := func(attrs ...[]byte) []byte { return genlMsg(testFamily, unix.ETHTOOL_MSG_CHANNELS_NTF, 0, attrs...) }
	header := func(attrs ...[]byte) []byte { return nest(unix.ETHTOOL_A_CHANNELS_HEADER, attrs...) }
	index := nlattr(unix.ETHTOOL_A_HEADER_DEV_INDEX, u32(2))
	// The header's first attribute (DEV_INDEX) claims more than the nest.
	nestOverrun := slices.Clone(good)
	binary.NativeEndian.PutUint16(nestOverrun[unix.SizeofNlMsghdr+genlHdrLen+unix.SizeofNlAttr:], 200)
	// The nest itself claims more than the message.
	attrOverrun := slices.Clone(good)
	binary.NativeEndian.PutUint16(attrOverrun[unix.SizeofNlMsghdr+genlHdrLen:], 2000)
	shortGenl := slices.Clone(good[:unix.SizeofNlMsghdr+2])
	binary.NativeEndian.PutUint32(shortGenl, uint32(len(shortGenl)))
	for name, in := range map[string][]byte{
		"length past end":            withLen(uint32(len(good) + 4)),
		"length below header":        withLen(8),
		"truncated":                  good[:len(good)-6],
		"short genlmsghdr":           shortGenl,
		"attribute past end":         attrOverrun,
		"header attribute past nest": nestOverrun,
		"attribute length below 4": ntf(header(index), func() []byte {
			a := nlattr(unix.ETHTOOL_A_CHANNELS_RX_COUNT, u32(1))
			binary.NativeEndian.PutUint16(a, 2)
			return a
		}()),
		"index of 2 bytes":     ntf(header(nlattr(unix.ETHTOOL_A_HEADER_DEV_INDEX, []byte{2, 0}))),
		"count of 8 bytes":     ntf(header(index), nlattr(unix.ETHTOOL_A_CHANNELS_COMBINED_COUNT, make([]byte, 8))),
		"count of 0 bytes":     ntf(header(index), nlattr(unix.ETHTOOL_A_CHANNELS_TX_COUNT, nil)),
		"missing header":       ntf(nlattr(unix.ETHTOOL_A_CHANNELS_COMBINED_COUNT, u32(3))),
		"header names nothing": ntf(header(nlattr(unix.ETHTOOL_A_HEADER_FLAGS, u32(0)))),
		"empty header":         ntf(header()),
		"name too long":        ntf(header(index, nlattr(unix.ETHTOOL_A_HEADER_DEV_NAME, bytes.Repeat([]byte("n"), altIfNameSize)))),
		"bad second message":   slices.Concat(good, ntf(header())),
	} {
		evs, err := ParseEthtoolMessages(in, testFamily)
		if !errors.Is(err, kernfs.ErrMalformed) {
			t.Errorf("%s: events %+v, err = %v, want ErrMalformed", name, evs, err)
			continue
		}
		t.Logf("%s: %v", name, err)
	}
}

func FuzzParseEthtoolMessages(f *testing.F) {
	f.Add(channelsNtf(2, "eth0", 3))
	f.Add(slices.Concat(channelsNtf(2, "eth0", 3), channelsNtf(9, "veth1", 1)))
	f.Add(genlMsg(testFamily, unix.ETHTOOL_MSG_RINGS_NTF, 0, nest(unix.ETHTOOL_A_RINGS_HEADER, nlattr(unix.ETHTOOL_A_HEADER_DEV_INDEX, u32(2)))))
	f.Add(genlMsg(testFamily, unix.ETHTOOL_MSG_CHANNELS_NTF, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := ParseEthtoolMessages(b, testFamily)
		if err != nil && !errors.Is(err, kernfs.ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
		if len(evs) > len(b)/(unix.SizeofNlMsghdr+genlHdrLen) {
			t.Fatalf("%d events from %d bytes", len(evs), len(b))
		}
		for _, ev := range evs {
			if ev.Index == 0 && ev.Name == "" || len(ev.Name) >= altIfNameSize {
				t.Fatalf("event %+v names no device or too long a name", ev)
			}
		}
	})
}

// familyReply builds nlctrl's answer to CTRL_CMD_GETFAMILY for the
// ethtool family (ctrl_fill_info): id, name, version, the ops (left
// out here), then the multicast groups, one nest per group.
func familyReply(seq uint32, id uint16, groups map[string]uint32) []byte {
	var grps [][]byte
	for i, name := range slices.Sorted(maps.Keys(groups)) {
		grps = append(grps, nest(uint16(i+1),
			nlattr(unix.CTRL_ATTR_MCAST_GRP_ID, u32(groups[name])),
			nlattr(unix.CTRL_ATTR_MCAST_GRP_NAME, append([]byte(name), 0))))
	}
	return genlMsg(unix.GENL_ID_CTRL, unix.CTRL_CMD_NEWFAMILY, seq,
		nlattr(unix.CTRL_ATTR_FAMILY_NAME, []byte("ethtool\x00")),
		nlattr(unix.CTRL_ATTR_FAMILY_ID, binary.NativeEndian.AppendUint16(nil, id)),
		nlattr(unix.CTRL_ATTR_VERSION, u32(1)),
		nlattr(unix.CTRL_ATTR_HDRSIZE, u32(0)),
		nest(unix.CTRL_ATTR_MCAST_GROUPS, grps...))
}

// nlError builds an NLMSG_ERROR answer carrying -errno for the request
// with sequence number seq.
func nlError(seq uint32, errno syscall.Errno) []byte {
	b := make([]byte, unix.SizeofNlMsghdr+unix.SizeofNlMsgerr)
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
	binary.NativeEndian.PutUint16(b[4:], unix.NLMSG_ERROR)
	binary.NativeEndian.PutUint32(b[8:], seq)
	binary.NativeEndian.PutUint32(b[unix.SizeofNlMsghdr:], uint32(-int32(errno)))
	return b
}

func TestParseFamilyReply(t *testing.T) {
	groups := map[string]uint32{"monitor": 9}
	f, ok, err := parseFamilyReply(familyReply(1, testFamily, groups), 1)
	if err != nil || !ok {
		t.Fatalf("reply: ok %v, %v", ok, err)
	}
	if f.ID != testFamily || f.Name != "ethtool" || !maps.Equal(f.Groups, groups) {
		t.Errorf("got %+v, want id %#x, ethtool, %v", f, testFamily, groups)
	}
	// A reply after other messages in one datagram, two groups.
	groups = map[string]uint32{"monitor": 40, "other": 3}
	f, ok, err = parseFamilyReply(slices.Concat(nlError(1, 0), familyReply(7, 0x20, nil), familyReply(1, 0x21, groups)), 1)
	if err != nil || !ok || f.ID != 0x21 || !maps.Equal(f.Groups, groups) {
		t.Errorf("got %+v, ok %v, %v; want id 0x21 and %v", f, ok, err, groups)
	}
	// Not an answer to this request: keep waiting.
	for name, in := range map[string][]byte{
		"other sequence": familyReply(2, testFamily, groups),
		"an ack":         nlError(1, 0),
		"other command":  genlMsg(unix.GENL_ID_CTRL, unix.CTRL_CMD_NEWOPS, 1),
		"other type":     genlMsg(testFamily, unix.CTRL_CMD_NEWFAMILY, 1),
		"empty":          nil,
	} {
		if f, ok, err := parseFamilyReply(in, 1); ok || err != nil {
			t.Errorf("%s: got %+v, ok %v, %v; want nothing yet", name, f, ok, err)
		}
	}
	// No ethtool family: ENOENT.
	if _, _, err := parseFamilyReply(nlError(1, syscall.ENOENT), 1); !errors.Is(err, ErrNoFamily) || !errors.Is(err, syscall.ENOENT) {
		t.Errorf("ENOENT: err = %v, want ErrNoFamily and ENOENT", err)
	}
	if _, _, err := parseFamilyReply(nlError(1, syscall.EPERM), 1); errors.Is(err, ErrNoFamily) || !errors.Is(err, syscall.EPERM) {
		t.Errorf("EPERM: err = %v, want EPERM, not ErrNoFamily", err)
	}
}

func TestParseFamilyReplyMalformed(t *testing.T) {
	reply := func(attrs ...[]byte) []byte { return genlMsg(unix.GENL_ID_CTRL, unix.CTRL_CMD_NEWFAMILY, 1, attrs...) }
	id := nlattr(unix.CTRL_ATTR_FAMILY_ID, binary.NativeEndian.AppendUint16(nil, testFamily))
	group := func(attrs ...[]byte) []byte { return nest(unix.CTRL_ATTR_MCAST_GROUPS, nest(1, attrs...)) }
	good := familyReply(1, testFamily, map[string]uint32{"monitor": 9})
	short := func(b []byte, n int) []byte {
		b = slices.Clone(b[:n])
		binary.NativeEndian.PutUint32(b, uint32(n))
		return b
	}
	for name, in := range map[string][]byte{
		"truncated":        good[:len(good)-8],
		"no family id":     reply(nlattr(unix.CTRL_ATTR_FAMILY_NAME, []byte("ethtool\x00"))),
		"id of 4 bytes":    reply(nlattr(unix.CTRL_ATTR_FAMILY_ID, u32(testFamily))),
		"group without id": reply(id, group(nlattr(unix.CTRL_ATTR_MCAST_GRP_NAME, []byte("monitor\x00")))),
		"group id 0":       reply(id, group(nlattr(unix.CTRL_ATTR_MCAST_GRP_NAME, []byte("monitor\x00")), nlattr(unix.CTRL_ATTR_MCAST_GRP_ID, u32(0)))),
		"group no name":    reply(id, group(nlattr(unix.CTRL_ATTR_MCAST_GRP_ID, u32(9)))),
		"group id 2 bytes": reply(id, group(nlattr(unix.CTRL_ATTR_MCAST_GRP_NAME, []byte("monitor\x00")), nlattr(unix.CTRL_ATTR_MCAST_GRP_ID, []byte{9, 0}))),
		"name too long":    reply(id, nlattr(unix.CTRL_ATTR_FAMILY_NAME, []byte("ethtool-and-much-more\x00"))),
		"short nlmsgerr":   short(nlError(1, syscall.ENOENT), unix.SizeofNlMsghdr+2),
		"short genl":       short(good, unix.SizeofNlMsghdr+2),
	} {
		if f, ok, err := parseFamilyReply(in, 1); !errors.Is(err, kernfs.ErrMalformed) {
			t.Errorf("%s: got %+v, ok %v, err = %v; want ErrMalformed", name, f, ok, err)
		}
	}
}

func FuzzParseFamilyReply(f *testing.F) {
	f.Add(familyReply(1, testFamily, map[string]uint32{"monitor": 9}))
	f.Add(nlError(1, syscall.ENOENT))
	f.Add(getFamilyRequest("ethtool", 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		fam, ok, err := parseFamilyReply(b, 1)
		switch {
		case err != nil && (ok || fam.Groups != nil):
			t.Fatalf("error %v with a family %+v, ok %v", err, fam, ok)
		case ok && len(fam.Groups) > len(b)/(2*unix.SizeofNlAttr):
			t.Fatalf("%d groups from %d bytes", len(fam.Groups), len(b))
		}
	})
}

// TestGetFamilyRequest reads the request back as the kernel's
// genl_family_rcv_msg would: one nlmsghdr to nlctrl asking for the
// family by name.
func TestGetFamilyRequest(t *testing.T) {
	b := getFamilyRequest("ethtool", 77)
	if n := binary.NativeEndian.Uint32(b); int(n) != len(b) || len(b)%4 != 0 {
		t.Fatalf("nlmsg_len %d for %d bytes", n, len(b))
	}
	if typ, flags := binary.NativeEndian.Uint16(b[4:]), binary.NativeEndian.Uint16(b[6:]); typ != unix.GENL_ID_CTRL || flags != unix.NLM_F_REQUEST {
		t.Errorf("type %#x flags %#x, want nlctrl and NLM_F_REQUEST", typ, flags)
	}
	if seq := binary.NativeEndian.Uint32(b[8:]); seq != 77 {
		t.Errorf("seq %d", seq)
	}
	if cmd := b[unix.SizeofNlMsghdr]; cmd != unix.CTRL_CMD_GETFAMILY {
		t.Errorf("cmd %d, want CTRL_CMD_GETFAMILY", cmd)
	}
	var name string
	err := walkAttrs(b[unix.SizeofNlMsghdr+genlHdrLen:], func(typ uint16, v []byte) error {
		if typ == unix.CTRL_ATTR_FAMILY_NAME {
			name = string(v)
		}
		return nil
	})
	if err != nil || name != "ethtool\x00" {
		t.Errorf("CTRL_ATTR_FAMILY_NAME %q, %v; want NUL-terminated ethtool", name, err)
	}
}

func TestAcceptEthtool(t *testing.T) {
	msg := channelsNtf(2, "eth0", 4)
	if evs, err := AcceptEthtool(0, testFamily, msg); err != nil || len(evs) != 1 || evs[0].Combined != 4 {
		t.Errorf("from kernel: %+v, %v", evs, err)
	}
	if _, err := AcceptEthtool(777, testFamily, msg); !errors.Is(err, ErrNotKernel) {
		t.Errorf("from port 777: err = %v, want ErrNotKernel", err)
	}
}

// TestEthtoolPump: each channel change is a hint that keeps the caches
// (not Fresh), coalesced like link events; the source's errors are accounted as the
// other sources' are.
func TestEthtoolPump(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake[[]ChannelsEvent]()
		w := startSources(t, Options{}, nil, nil, src, nil)
		src.send([]ChannelsEvent{{Index: 2, Name: "eth0", Combined: 3}}, nil)
		synctest.Wait()
		tr, ok := poll(w)
		if !ok {
			t.Fatal("no trigger at once for a channel change")
		}
		wantCauses(t, tr, map[Cause]int{CauseChannels: 1})
		if tr.Fresh() || tr.Label() != LabelChannels || tr.Reload() {
			t.Errorf("trigger fresh %v label %q reload %v; want not fresh, channels, no reload",
				tr.Fresh(), tr.Label(), tr.Reload())
		}
		// A burst: two devices, and a datagram without channel events.
		src.send([]ChannelsEvent{{Index: 2, Combined: 4}, {Index: 3, Combined: 4}}, nil)
		src.send(nil, nil)
		src.send(nil, fmt.Errorf("ethtool: %w: sender port 5", ErrNotKernel))
		src.send(nil, fmt.Errorf("ethtool: %w", kernfs.ErrMalformed))
		time.Sleep(testMaxDelay)
		tr, ok = poll(w)
		if !ok {
			t.Fatal("no trigger after the burst")
		}
		wantCauses(t, tr, map[Cause]int{CauseChannels: 2})
		if tr.Fresh() {
			t.Error("burst of channel changes is fresh")
		}
		src.send(nil, fmt.Errorf("ethtool: %w", ErrOverflow))
		time.Sleep(testMaxDelay)
		if tr, _ := poll(w); tr.Causes[CauseLost] != 1 || !tr.Fresh() {
			t.Errorf("overflow: trigger %v fresh %v, want lost events, fresh", tr.Causes, tr.Fresh())
		}
		wantStats(t, w.Stats(),
			map[UeventKind]uint64{},
			map[string]uint64{"not_kernel": 1, "malformed": 1},
			map[string]uint64{"ethtool": 1})
		// A source failing degrades, asks for a rescan, and stops.
		errBroken := errors.New("recvmsg: broken")
		src.send(nil, errBroken)
		wantCauses(t, next(w), map[Cause]int{CauseLost: 1})
		if err := w.Degraded(); !errors.Is(err, errBroken) || !strings.Contains(err.Error(), "ethtool source") {
			t.Errorf("Degraded = %v, want the ethtool source's %v", err, errBroken)
		}
	})
}
