package napi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/watch"
)

// attr encodes one netlink attribute with a payload of v.
func attr(typ uint16, v []byte) []byte {
	b := make([]byte, 4, 4+len(v)+3)
	binary.NativeEndian.PutUint16(b[0:], uint16(4+len(v)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func u32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }

func TestParseNAPI(t *testing.T) {
	// As netdev_nl_napi_fill_one writes it on 6.8+: id, ifindex, irq
	// (when the driver set it), defer-hard-irqs (6.13+, skipped), pid.
	var full []byte
	full = append(full, attr(napiAttrID, u32(8193))...)
	full = append(full, attr(napiAttrIfindex, u32(2))...)
	full = append(full, attr(napiAttrIRQ, u32(27))...)
	full = append(full, attr(5, u32(0))...)
	full = append(full, attr(napiAttrPID, u32(360))...)
	n, err := parseNAPI(full)
	if want := (napiInfo{ifindex: 2, id: 8193, irq: 27, pid: 360}); err != nil || n != want {
		t.Errorf("got %+v, %v; want %+v", n, err, want)
	}
	// Not threaded and no IRQ from the driver: irq and pid absent.
	bare := append(attr(napiAttrID, u32(8194)), attr(napiAttrIfindex, u32(2))...)
	n, err = parseNAPI(bare)
	if want := (napiInfo{ifindex: 2, id: 8194, irq: -1, pid: -1}); err != nil || n != want {
		t.Errorf("got %+v, %v; want %+v", n, err, want)
	}
	// AppendAttrU32 writes what parseNAPI reads.
	n, err = parseNAPI(watch.AppendAttrU32(watch.AppendAttrU32(nil, napiAttrIfindex, 7), napiAttrID, 9000))
	if err != nil || n.ifindex != 7 || n.id != 9000 {
		t.Errorf("AppendAttrU32: got %+v, %v", n, err)
	}
	for name, b := range map[string][]byte{
		"no id":        attr(napiAttrIfindex, u32(2)),
		"short pid":    append(bare, attr(napiAttrPID, []byte{1, 2})...),
		"negative irq": append(bare, attr(napiAttrIRQ, u32(0xffffffff))...),
		"cut attr":     bare[:len(bare)-2],
		"bad length":   append(bare, 0xff, 0, 4, 0),
	} {
		if _, err := parseNAPI(b); !errors.Is(err, kernfs.ErrMalformed) {
			t.Errorf("%s: got %v, want ErrMalformed", name, err)
		}
	}
}

func TestUnavailable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("x: %w", watch.ErrNoFamily), true},
		{fmt.Errorf("dump: %w", syscall.EOPNOTSUPP), true},
		{fmt.Errorf("dump: %w", syscall.EINVAL), true},
		{fmt.Errorf("dump: %w", syscall.EPERM), false},
		{nil, false},
	} {
		if got := unavailable(c.err); got != c.want {
			t.Errorf("unavailable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestDumpNAPIsLive asks this machine's kernel for the NAPIs of lo
// (ifindex 1, which has none): a read that changes nothing. A kernel
// before 6.8 must answer in a way unavailable recognises; a later one,
// with no NAPI.
func TestDumpNAPIsLive(t *testing.T) {
	infos, err := dumpNAPIs(1)
	switch {
	case err != nil && !unavailable(err):
		t.Fatalf("napi-get for lo: %v, neither an answer nor a kernel without napi-get", err)
	case err != nil:
		t.Logf("no napi-get on this kernel: %v", err)
	case len(infos) != 0:
		t.Errorf("napi-get for lo: %+v, want none", infos)
	}
}
