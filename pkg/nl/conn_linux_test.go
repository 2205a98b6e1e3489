package nl

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCheckSender is the trust decision on its own: only port 0 (the
// kernel) with no credentials or uid 0 is accepted.
func TestCheckSender(t *testing.T) {
	for _, tt := range []struct {
		name string
		port uint32
		cred *unix.Ucred
		ok   bool
	}{
		{"kernel with creds", 0, &unix.Ucred{Pid: 0, Uid: 0, Gid: 0}, true},
		{"kernel without creds", 0, nil, true},
		{"userspace port", 4321, &unix.Ucred{Pid: 4321, Uid: 0}, false},
		{"userspace port no creds", 1, nil, false},
		{"port 0 but uid 1000", 0, &unix.Ucred{Uid: 1000}, false},
	} {
		if err := CheckSender(tt.port, tt.cred); (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrNotKernel)) {
			t.Errorf("%s: err = %v, want ok %v or ErrNotKernel", tt.name, err, tt.ok)
		}
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

// TestResolveFamily asks this host's nlctrl for a family every kernel
// has, and for one none has: reads only.
func TestResolveFamily(t *testing.T) {
	c, err := ListenGeneric("nlctrl", "notify", 0, 8192)
	if err != nil {
		t.Fatalf("nlctrl: %v", err)
	}
	if c.Family != unix.GENL_ID_CTRL {
		t.Errorf("nlctrl family id %d, want %d", c.Family, unix.GENL_ID_CTRL)
	}
	c.Close()
	if _, err := ListenGeneric("numairqd-none", "x", 0, 8192); !errors.Is(err, ErrNoFamily) {
		t.Errorf("missing family: err = %v, want ErrNoFamily", err)
	}
	if _, err := ListenGeneric("nlctrl", "numairqd-none", 0, 8192); !errors.Is(err, ErrNoFamily) {
		t.Errorf("missing group: err = %v, want ErrNoFamily", err)
	}
}
