package watch

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numairqd/numairqd/pkg/kernfs"
)

const virtioPCI = "/devices/pci0000:00/0000:00:02.0/0000:41:00.0"

// TestParseUeventRecorded parses the messages in testdata/uevents, the
// shape a NUMA QEMU guest sent for CPU hotplug and a virtio-net re-bind.
func TestParseUeventRecorded(t *testing.T) {
	tests := []struct {
		file        string
		action      string
		devpath     string
		subsystem   string
		seq         uint64
		env         map[string]string // a subset of Env
		interesting bool
	}{
		{"cpu5-offline", "offline", "/devices/system/cpu/cpu5", "cpu", 1811,
			map[string]string{"DRIVER": "processor"}, true},
		{"cpu5-online", "online", "/devices/system/cpu/cpu5", "cpu", 1813, nil, true},
		{"machinecheck5-remove", "remove", "/devices/system/machinecheck/machinecheck5", "machinecheck", 1812, nil, false},
		{"machinecheck5-add", "add", "/devices/system/machinecheck/machinecheck5", "machinecheck", 1814, nil, false},
		{"rx0-remove", "remove", virtioPCI + "/virtio0/net/eth0/queues/rx-0", "queues", 1820, nil, false},
		{"eth0-remove", "remove", virtioPCI + "/virtio0/net/eth0", "net", 1836,
			map[string]string{"INTERFACE": "eth0", "IFINDEX": "2"}, true},
		{"virtio0-unbind", "unbind", virtioPCI + "/virtio0", "virtio", 1837, nil, false},
		{"pci-unbind", "unbind", virtioPCI, "pci", 1838,
			map[string]string{"PCI_SLOT_NAME": "0000:41:00.0", "PCI_ID": "1AF4:1041", "PCI_CLASS": "20000"}, true},
		{"pci-bind", "bind", virtioPCI, "pci", 1840,
			map[string]string{"DRIVER": "virtio-pci", "MODALIAS": "pci:v00001AF4d00001041sv00001AF4sd00001100bc02sc00i00"}, true},
		{"eth0-add", "add", virtioPCI + "/virtio0/net/eth0", "net", 1842, map[string]string{"IFINDEX": "2"}, true},
		{"pci-remove", "remove", virtioPCI, "pci", 1850, nil, true},
		{"node2-add", "add", "/devices/system/node/node2", "node", 412, nil, true},
		{"memory40-add", "add", "/devices/system/memory/memory40", "memory", 413, nil, false},
		{"memory40-online", "online", "/devices/system/memory/memory40", "memory", 414, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b := readUevent(t, tt.file+".uevent")
			u, err := ParseUevent(b)
			if err != nil {
				t.Fatal(err)
			}
			if u.Action != tt.action || u.DevPath != tt.devpath || u.Subsystem != tt.subsystem || u.Seq != tt.seq {
				t.Errorf("got %q@%q subsystem %q seq %d, want %q@%q subsystem %q seq %d",
					u.Action, u.DevPath, u.Subsystem, u.Seq, tt.action, tt.devpath, tt.subsystem, tt.seq)
			}
			for k, v := range tt.env {
				if u.Env[k] != v {
					t.Errorf("Env[%s] = %q, want %q", k, u.Env[k], v)
				}
			}
			if u.Env["ACTION"] != tt.action || u.Env["SUBSYSTEM"] != tt.subsystem {
				t.Errorf("Env lacks ACTION or SUBSYSTEM: %v", u.Env)
			}
			if got := Interesting(u); got != tt.interesting {
				t.Errorf("Interesting = %v, want %v", got, tt.interesting)
			}
			if u.Subsystem != tt.subsystem || u.Action != tt.action {
				t.Errorf("Subsystem, Action = %q, %q; want %q, %q", u.Subsystem, u.Action, tt.subsystem, tt.action)
			}
		})
	}
}

func TestParseUeventUdev(t *testing.T) {
	_, err := ParseUevent(readUevent(t, "udev-cpu5-offline.udev"))
	if !errors.Is(err, ErrLibudev) {
		t.Fatalf("err = %v, want ErrLibudev", err)
	}
}

func TestParseUeventMalformed(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // in the error text
	}{
		{"empty", "", "not NUL-terminated"},
		{"no NUL", "add@/devices/x", "not NUL-terminated"},
		{"no at", "add/devices/x\x00", "no '@'"},
		{"empty action", "@/devices/x\x00", "empty action"},
		{"empty devpath", "add@\x00", "devpath"},
		{"relative devpath", "add@devices/x\x00", "devpath"},
		{"field without =", "add@/devices/x\x00ACTION=add\x00JUNK\x00", `"JUNK" is not KEY=VALUE`},
		{"empty key", "add@/devices/x\x00=v\x00", "not KEY=VALUE"},
		{"action mismatch", "add@/devices/x\x00ACTION=remove\x00", "contradicts header"},
		{"devpath mismatch", "add@/devices/x\x00DEVPATH=/devices/y\x00", "contradicts header"},
		{"bad seqnum", "add@/devices/x\x00SEQNUM=12a\x00", `SEQNUM="12a"`},
		{"negative seqnum", "add@/devices/x\x00SEQNUM=-1\x00", "SEQNUM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseUevent([]byte(tt.in))
			if !errors.Is(err, kernfs.ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestParseUeventLenient(t *testing.T) {
	// Values keep everything after the first '=', empty fields (the
	// trailing NUL, padding) are skipped, and a message without env
	// (as injected in tests) is accepted.
	u, err := ParseUevent([]byte("change@/devices/x\x00\x00K=a=b=\x00E=\x00\x00SEQNUM=7"))
	if err != nil {
		t.Fatal(err)
	}
	if u.Env["K"] != "a=b=" || u.Env["E"] != "" || u.Seq != 7 || u.Subsystem != "" {
		t.Errorf("got %+v", u)
	}
	u, err = ParseUevent([]byte("add@/a@b\x00"))
	if err != nil || u.Action != "add" || u.DevPath != "/a@b" || len(u.Env) != 0 {
		t.Errorf("got %+v, %v", u, err)
	}
}

func TestInteresting(t *testing.T) {
	tests := []struct {
		subsystem, action string
		want              bool
	}{
		{"cpu", "online", true}, {"cpu", "offline", true}, {"cpu", "add", true}, {"cpu", "remove", true},
		{"cpu", "change", false},
		{"node", "add", true}, {"node", "remove", true},
		{"memory", "online", true}, {"memory", "offline", true}, {"memory", "add", false}, {"memory", "remove", false},
		{"pci", "add", true}, {"pci", "remove", true}, {"pci", "bind", true}, {"pci", "unbind", true},
		{"pci", "change", false},
		{"net", "add", true}, {"net", "remove", true}, {"net", "move", true}, {"net", "change", false},
		{"queues", "add", false}, {"queues", "remove", false},
		{"machinecheck", "add", false}, {"virtio", "bind", false}, {"block", "add", false}, {"", "add", false},
	}
	for _, tt := range tests {
		if got := Interesting(Uevent{Subsystem: tt.subsystem, Action: tt.action}); got != tt.want {
			t.Errorf("Interesting(%s/%s) = %v, want %v", tt.subsystem, tt.action, got, tt.want)
		}
	}
}

func FuzzParseUevent(f *testing.F) {
	files, err := filepath.Glob("testdata/uevents/*")
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("add@/devices/x\x00ACTION=add\x00DEVPATH=/devices/x\x00SEQNUM=1\x00"))
	f.Add([]byte("libudev\x00"))
	f.Add([]byte("@\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := ParseUevent(b)
		if err != nil {
			if !errors.Is(err, kernfs.ErrMalformed) && !errors.Is(err, ErrLibudev) {
				t.Fatalf("error %v wraps neither kernfs.ErrMalformed nor ErrLibudev", err)
			}
			return
		}
		if u.Action == "" || u.DevPath == "" {
			t.Fatalf("parsed with empty action or devpath: %+v", u)
		}
		hdr, _, _ := bytes.Cut(b, []byte{0})
		if string(hdr) != u.Action+"@"+u.DevPath {
			t.Fatalf("header %q, parsed %q@%q", hdr, u.Action, u.DevPath)
		}
		if a, ok := u.Env["ACTION"]; ok && a != u.Action {
			t.Fatalf("Env ACTION %q, Action %q", a, u.Action)
		}
		if u.Subsystem != u.Env["SUBSYSTEM"] {
			t.Fatalf("Subsystem %q, Env %q", u.Subsystem, u.Env["SUBSYSTEM"])
		}
	})
}

func readUevent(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "uevents", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
