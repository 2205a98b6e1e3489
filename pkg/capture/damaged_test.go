package capture_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/capture"
)

// member is one tar entry of a hand-made archive; size, when set, is
// the header's and no data follows (the archive ends there).
type member struct {
	name string
	typ  byte
	body string
	link string
	size int64
}

var manifest = member{name: "manifest.json", typ: tar.TypeReg, body: `{"format": 1}`}

// archive is a gzip'd tar of ms.
func archive(t testing.TB, ms ...member) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, m := range ms {
		h := &tar.Header{Name: m.name, Typeflag: m.typ, Linkname: m.link, Mode: 0o644, Size: int64(len(m.body))}
		if m.size > 0 {
			h.Size = m.size
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if m.size > 0 {
			tw.Flush()
			zw.Close()
			return buf.Bytes()
		}
		if _, err := io.WriteString(tw, m.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.Bytes()
}

// bomb is a gzip'd tar whose one file of n zero bytes is a few MB.
func bomb(t *testing.T, name string, n int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	for _, m := range []member{manifest, {name: name, typ: tar.TypeReg, size: n}} {
		h := &tar.Header{Name: m.name, Typeflag: m.typ, Mode: 0o644, Size: int64(len(m.body)) + m.size}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, m.body)
		if _, err := io.CopyN(tw, zeros{}, m.size); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestOpenDamaged: each damaged capture is refused fast with one short
// line naming the file, and leaves nothing in TMPDIR.
func TestOpenDamaged(t *testing.T) {
	good := archive(t, manifest, member{name: "sys/devices/system/cpu/online", typ: tar.TypeReg, body: "0-3\n"})
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty file", nil, "an empty file, not a capture"},
		{"not gzip", []byte("sys/devices/system/cpu/online\n"), "not a gzip'd capture: gzip: invalid header"},
		{"truncated", good[:len(good)/2], "damaged archive: unexpected EOF"},
		{"corrupt gzip", append(bytes.Clone(good[:len(good)-8]), 0, 0, 0, 0, 0, 0, 0, 0), "damaged archive: gzip: invalid checksum"},
		{"no manifest", archive(t, member{name: "sys", typ: tar.TypeDir}), `"manifest.json": missing`},
		{"manifest not JSON", archive(t, member{name: "manifest.json", typ: tar.TypeReg, body: "format: 1"}), `"manifest.json": not JSON`},
		{"newer format", archive(t, member{name: "manifest.json", typ: tar.TypeReg, body: `{"format": 2}`}), "format 2, this numairqd reads format 1"},
		{"older format", archive(t, member{name: "manifest.json", typ: tar.TypeReg, body: `{"format": 0}`}), "format 0, this numairqd reads format 1"},
		{"8 GiB header", archive(t, manifest, member{name: "sys/devices/system/cpu/online", typ: tar.TypeReg, size: 8 << 30}), "8589934592 bytes, more than the limit of 65536"},
		{"gzip bomb", bomb(t, "sys/devices/system/node/online", 64<<20), "67108864 bytes, more than the limit of 65536"},
		{"dot dot", archive(t, manifest, member{name: "../x", typ: tar.TypeReg, body: "x"}), `"../x": a path that is not clean or leaves the archive`},
		{"dot dot inside", archive(t, manifest, member{name: "sys/../../x", typ: tar.TypeReg, body: "x"}), `"sys/../../x": a path that is not clean`},
		{"absolute", archive(t, manifest, member{name: "/etc/passwd", typ: tar.TypeReg, body: "root"}), `"/etc/passwd": an absolute path`},
		{"outside", archive(t, manifest, member{name: "home/x", typ: tar.TypeReg, body: "x"}), `"home/x": outside sys/, proc/ and etc/`},
		{"symlink out", archive(t, manifest, member{name: "sys/class/l", typ: tar.TypeSymlink, link: "../../.."}), `"sys/class/l": symlink to "../../.." that leaves the archive`},
		{"symlink absolute", archive(t, manifest, member{name: "sys/l", typ: tar.TypeSymlink, link: "/etc"}), `symlink to "/etc" that is absolute`},
		{"symlink not clean", archive(t, manifest, member{name: "sys/a/b/l", typ: tar.TypeSymlink, link: "../c/../../.."}), "that is absolute, empty or not clean"},
		{"below a symlink", archive(t, manifest, member{name: "sys/l", typ: tar.TypeSymlink, link: "../proc"},
			member{name: "sys/l/x", typ: tar.TypeReg, body: "x"}), `"sys/l/x": below a symlink`},
		{"duplicate", archive(t, manifest, member{name: "proc/stat", typ: tar.TypeReg, body: "cpu"}, member{name: "proc/stat", typ: tar.TypeReg, body: "cpu"}),
			`"proc/stat": a second entry of this name`},
		{"hard link", archive(t, manifest, member{name: "sys/x", typ: tar.TypeLink, link: "manifest.json"}), `"sys/x": entry of type '1'`},
		{"fifo", archive(t, manifest, member{name: "proc/interrupts", typ: tar.TypeFifo}), `"proc/interrupts": entry of type '6'`},
		{"device", archive(t, manifest, member{name: "sys/zero", typ: tar.TypeChar}), `"sys/zero": entry of type '3'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			file := filepath.Join(t.TempDir(), "damaged.tar.gz")
			if err := os.WriteFile(file, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			r, err := capture.Open(file)
			took := time.Since(start)
			if err == nil {
				r.Close()
				t.Fatal("opened")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "capture "+file+": ") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") || len(msg) >= 300 {
				t.Errorf("error %q, want one line under 300 bytes naming %s and saying %q", msg, file, tc.want)
			}
			t.Log(msg)
			if took > time.Second {
				t.Errorf("took %v", took)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("left %v in TMPDIR", left)
			}
		})
	}
	t.Run("good", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "good.tar.gz")
		os.WriteFile(file, good, 0o644)
		r, err := capture.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(r.Roots.Sys, "devices/system/cpu/online"))
		if string(b) != "0-3\n" || err != nil || r.Roots.Netdev != nil || r.Queues != nil || r.Config != "" {
			t.Errorf("online %q, %v; Netdev %v Queues %v Config %q", b, err, r.Roots.Netdev, r.Queues, r.Config)
		}
		dir := filepath.Dir(r.Roots.Sys)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("Close left %s: %v", dir, err)
		}
	})
}

// FuzzOpen: no archive panics Open, or leaves anything in TMPDIR.
func FuzzOpen(f *testing.F) {
	f.Add(archive(f, manifest, member{name: "sys/devices/system/cpu/online", typ: tar.TypeReg, body: "0-3\n"},
		member{name: "sys/l", typ: tar.TypeSymlink, link: "devices"}))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, data []byte) {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		file := filepath.Join(t.TempDir(), "fuzz.tar.gz")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := capture.Open(file)
		if err == nil {
			r.Close()
		} else if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) >= 300+len(file) {
			t.Errorf("error %q is not one short line", msg)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("left %v in TMPDIR", left)
		}
	})
}
