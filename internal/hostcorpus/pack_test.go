package hostcorpus

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
	"github.com/numairqd/numairqd/pkg/capture"
)

// TestPackKeepsUnchanged packs a tree twice, then changed: the second
// capture differs only in its manifest's time and leaves the file as
// it was, the third rewrites it, and it opens.
func TestPackKeepsUnchanged(t *testing.T) {
	tree := fakesys.New(t)
	tree.AddMachine(fakesys.QEMUGuest())
	tree.AddQEMUGuestDevices()
	dst := filepath.Join(t.TempDir(), "guest.tar.gz")
	Pack(t, tree, "", dst)
	first, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	Pack(t, tree, "", dst)
	if again, _ := os.ReadFile(dst); !bytes.Equal(again, first) {
		t.Error("packing the same tree again rewrote the capture")
	}
	tree.WriteFile("sys/devices/system/cpu/isolated", "7\n")
	Pack(t, tree, "", dst)
	if changed, _ := os.ReadFile(dst); bytes.Equal(changed, first) || sameEntries(changed, first) {
		t.Error("packing a changed tree kept the old capture")
	}
	r, err := capture.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, err := os.ReadFile(filepath.Join(r.Roots.Sys, "devices/system/cpu/isolated")); err != nil || string(b) != "7\n" {
		t.Errorf("isolated in the capture: %q, %v; want 7", b, err)
	}
}
