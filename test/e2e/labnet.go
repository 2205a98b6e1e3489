//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// labNet is the private network namespace of one boot. The taps that
// back the guest's NICs and the QEMU process live in it, and so does
// the traffic generator, so nothing the guest sends and nothing the
// test generates can reach another network: the namespace has no
// other interface, no address and no route. Deleting it deletes the
// taps.
type labNet struct {
	name string   // ip netns name: e2e<pid>n<seq>
	taps []string // taps[i] backs Guest.Net[i]
}

var netSeq atomic.Int32

// newLabNet creates the namespace with one tap per NIC, multi_queue
// where that NIC has several queues (QEMU refuses a one-queue backend
// on a multi_queue tap), and deletes it when t ends. The taps are up, so that frames written to
// them reach QEMU; IPv6 is off in the namespace, so the kernel sends
// the guest nothing by itself (no router solicitations, no DAD).
func newLabNet(t *testing.T, nics []NetDevice) *labNet {
	t.Helper()
	n := &labNet{name: fmt.Sprintf("e2e%dn%d", os.Getpid(), netSeq.Add(1))}
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", n.name)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", n.name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", n.name, err, out)
		}
	})
	for _, k := range []string{"all", "default"} {
		run("netns", "exec", n.name, "sh", "-c", "echo 1 >/proc/sys/net/ipv6/conf/"+k+"/disable_ipv6 2>/dev/null || true")
	}
	for i, d := range nics {
		tap := "tap" + strconv.Itoa(i)
		args := []string{"-n", n.name, "tuntap", "add", "dev", tap, "mode", "tap"}
		if d.Queues > 1 {
			args = append(args, "multi_queue")
		}
		run(args...)
		run("-n", n.name, "link", "set", tap, "up")
		n.taps = append(n.taps, tap)
	}
	return n
}

// command is name with args run inside the namespace. ip netns exec
// execs name, so the process's exit status and signals are its own.
func (n *labNet) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.name, name}, args...)...)
}

// removeStaleNets deletes namespaces left by e2e runs whose process is
// gone (killed before its cleanup ran). Only names this harness makes
// are touched: e2e<pid>n<seq>.
func removeStaleNets() {
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "e2e")
		if !ok {
			continue
		}
		pidStr, seq, ok := strings.Cut(rest, "n")
		pid, err := strconv.Atoi(pidStr)
		if !ok || err != nil {
			continue
		}
		if _, err := strconv.Atoi(seq); err != nil {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			continue
		}
		_ = exec.Command("ip", "netns", "del", e.Name()).Run()
	}
}

// NetLink is one interface of a boot's namespace with its counters,
// from `ip -s -j link show`: what shows where traffic went.
type NetLink struct {
	Name   string `json:"ifname"`
	TxQLen uint64 `json:"txqlen"`
	Stats  struct {
		RX struct {
			Packets uint64 `json:"packets"`
		} `json:"rx"`
		TX struct {
			Packets uint64 `json:"packets"`
			Dropped uint64 `json:"dropped"`
		} `json:"tx"`
	} `json:"stats64"`
}

// links lists the namespace's interfaces with their counters.
func (n *labNet) links() ([]NetLink, error) {
	out, err := exec.Command("ip", "-n", n.name, "-s", "-j", "link", "show").Output()
	if err != nil {
		return nil, fmt.Errorf("ip -n %s -s -j link show: %w", n.name, err)
	}
	var l []NetLink
	if err := json.Unmarshal(out, &l); err != nil {
		return nil, fmt.Errorf("ip -n %s -s -j link show: %w", n.name, err)
	}
	return l, nil
}
