//go:build e2e

package e2e

import (
	"encoding/base64"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// Tests of the harness itself; they boot nothing.

func TestParseMarkers(t *testing.T) {
	log := strings.Join([]string{
		"[    1.0] some kernel line E2E-nothing",
		"E2E-BEGIN s1\r",
		"E2E-METRIC boot_s 4.5",
		"E2E-RESULT s1 nodes PASS 4 nodes seen",
		"E2E-RESULT s1 write FAIL got EIO",
		"E2E-RESULT other x PASS wrong scenario",
		"E2E-DATA state 0 " + base64.StdEncoding.EncodeToString([]byte(`{"a":1}`)),
		"E2E-DATA empty 2",
		"E2E-END s1 0",
	}, "\n")
	m := parseMarkers(log, "s1")
	if !m.Begun || !m.Ended || m.RC != 0 {
		t.Errorf("begun %v ended %v rc %d", m.Begun, m.Ended, m.RC)
	}
	wantChecks := []Check{{"nodes", "PASS", "4 nodes seen"}, {"write", "FAIL", "got EIO"}}
	if !slices.Equal(m.Checks, wantChecks) {
		t.Errorf("checks %v, want %v", m.Checks, wantChecks)
	}
	if !slices.Equal(m.Metrics, []Metric{{"boot_s", "4.5"}}) {
		t.Errorf("metrics %v", m.Metrics)
	}
	if d := m.Data["state"]; d.RC != 0 || string(d.Output) != `{"a":1}` {
		t.Errorf("data state = %+v", d)
	}
	if d, ok := m.Data["empty"]; !ok || d.RC != 2 || len(d.Output) != 0 {
		t.Errorf("data empty = %+v %v", d, ok)
	}
	if len(m.Malformed) != 1 || !strings.Contains(m.Malformed[0], "wrong scenario") {
		t.Errorf("malformed %q", m.Malformed)
	}
}

func TestSpread(t *testing.T) {
	g := FourNodeGuest()
	online := []int{0, 1, 2, 3, 4, 5, 6, 7}
	for node, want := range [][]int{
		{0, 1, 2, 3, 4, 5, 6, 7},
		{2, 3, 0, 1, 6, 7, 4, 5},
		{4, 5, 6, 7, 0, 1, 2, 3},
		{6, 7, 4, 5, 2, 3, 0, 1},
	} {
		if got := g.Spread(node, online); !slices.Equal(got, want) {
			t.Errorf("Spread(%d) = %v, want %v", node, got, want)
		}
	}
	// CPU 5 offline.
	if got, want := g.Spread(2, []int{0, 1, 2, 3, 4, 6, 7}), []int{4, 6, 7, 0, 1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("Spread(2) without cpu5 = %v, want %v", got, want)
	}
}

func TestGuestValidate(t *testing.T) {
	for _, g := range []Guest{FourNodeGuest(), MANAGuest()} {
		if err := g.Validate(); err != nil {
			t.Errorf("%+v: %v", g, err)
		}
	}
	bad := FourNodeGuest()
	bad.Distance[1][1] = 11
	if bad.Validate() == nil {
		t.Error("distance[1][1] = 11 accepted")
	}
	bad = FourNodeGuest()
	bad.Net[0].Node = 4
	if bad.Validate() == nil {
		t.Error("net device on node 4 of 4 accepted")
	}
	args := strings.Join(FourNodeGuest().qemuArgs([]string{"tapX"}, []string{"img"}), " ")
	for _, want := range []string{
		"-smp 8,sockets=4,cores=2,threads=1",
		"-numa node,nodeid=2,memdev=m2,cpus=4-5",
		"-numa dist,src=2,dst=1,val=22",
		"pxb-pcie,id=pxb1,bus_nr=64,numa_node=2",
		"queues=6,vhost=off",
		"mq=on,vectors=14",
		"pxb-pcie,id=pxb2,bus_nr=32,numa_node=1",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("qemu args lack %q:\n%s", want, args)
		}
	}
	if a := FourNodeGuest().NetAddress(0); a != "0000:41:00.0" {
		t.Errorf("NetAddress = %s", a)
	}
}

// TestInitramfs builds an archive and lists it with the host's cpio.
func TestInitramfs(t *testing.T) {
	env := requireEnv(t)
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Fatalf("no cpio to list the archive: %s", installHint)
	}
	order, err := moduleOrder(env.modDir, []string{"virtio_net", "nvme"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range order {
		names = append(names, moduleName(m))
	}
	// Dependencies come first.
	if slices.Index(names, "virtio") > slices.Index(names, "virtio_net") ||
		slices.Index(names, "nvme_core") > slices.Index(names, "nvme") {
		t.Errorf("module order %v", names)
	}
	dst := filepath.Join(t.TempDir(), "i.cpio.gz")
	ir := initramfs{Busybox: env.busybox, ModDir: env.modDir, Modules: order,
		Files: map[string][]byte{"/init": []byte("#!/bin/sh\n"), "/e2e/deep/x.sh": []byte("x")}}
	if err := ir.write(dst); err != nil {
		t.Fatal(err)
	}
	list := cpio(t, dst, "", "-itv")
	for _, want := range []string{" init\n", " bin/busybox\n", "bin/sh -> busybox", " e2e/deep/x.sh\n", " lib/modules/virtio_net.ko\n", "dev/console"} {
		if !strings.Contains(list, want) {
			t.Errorf("archive lacks %q:\n%s", want, list)
		}
	}
}

// TestRetryReason: only QEMU's own failures earn a second boot.
func TestRetryReason(t *testing.T) {
	begun := markers{Begun: true, Checks: []Check{{Name: "a", Status: "PASS"}}}
	loaded := markers{Begun: true, Metrics: []Metric{{Name: "guest_modules_loaded_uptime_s", Value: "6.1"}}}
	stalled := markers{Begun: true, Metrics: []Metric{{Name: "guest_stalled_uptime_s", Value: "65.2"}}}
	failed := markers{Begun: true, Checks: []Check{{Name: "a", Status: "FAIL"}}}
	ended := markers{Begun: true, Ended: true}
	for _, tc := range []struct {
		name  string
		boot  bootResult
		m     markers
		retry bool
	}{
		{"clean run", bootResult{}, ended, false},
		{"segfault before E2E-END", bootResult{signal: syscall.SIGSEGV}, begun, true},
		{"segfault after E2E-END", bootResult{signal: syscall.SIGSEGV}, ended, false},
		{"segfault after a failed check", bootResult{signal: syscall.SIGSEGV}, failed, false},
		{"no E2E-BEGIN", bootResult{}, markers{}, true},
		{"no E2E-BEGIN, timed out", bootResult{timedOut: true, signal: syscall.SIGKILL}, markers{}, true},
		{"timed out in the scenario", bootResult{timedOut: true, signal: syscall.SIGKILL}, loaded, false},
		{"timed out loading modules", bootResult{timedOut: true, signal: syscall.SIGKILL}, begun, true},
		{"guard stalled in modules", bootResult{}, stalled, true},
		{"guard fired as the last insmod returned", bootResult{}, markers{Begun: true, Metrics: append(stalled.Metrics, loaded.Metrics...)}, true},
		{"guard's marker on the console only", bootResult{console: "E2E-METRIC guest_stalled_uptime_s 61.0\r\n"}, begun, true},
		{"exited early without a signal", bootResult{}, loaded, false},
		{"exited early before modules", bootResult{}, begun, false},
	} {
		got := retryReason(tc.boot, tc.m)
		if (got != "") != tc.retry {
			t.Errorf("%s: retryReason = %q, want retry %v", tc.name, got, tc.retry)
		}
	}
}
