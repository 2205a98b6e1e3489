//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The podman scenario runs the shipped DaemonSet under a real container
// runtime: Debian 13's podman 5 (crun, cgroup v2, vfs storage) in the
// systemd guest loads the image deploy/image builds (podman load, no
// registry, no network) and plays deploy/kubernetes' ConfigMap and
// DaemonSet with `podman kube play`. The pod must place the guest's
// IRQs, write the XPS maps, pin the threaded NAPI kthreads, answer
// /healthz, hold CAP_NET_ADMIN and CAP_SYS_NICE alone, see the cgroup
// v2 root, and keep
// placement whole over a CPU offline/online without a restart.
//
// One change is made to the shipped DaemonSet: podman's downward API
// has no status.podIP, so POD_IP (for --listen) is given as 127.0.0.1,
// the address a hostNetwork pod's probes and the checks reach.
//
// E2E_PODMAN=0 skips it, and so does E2E_SYSTEMD=0 (it boots a systemd
// root too; about 4 min under TCG; mmdebstrap builds its root on first
// use and caches it).

const podmanScript = `
ip link set lo up
IMG=@IMAGE@
IF=$(ls /sys/bus/pci/devices/$ADDR/virtio*/net)
# Up (napi-get lists only an up interface's NAPIs, with their kthreads'
# pids) and threaded NAPI on before the pod starts, as a node's tuning
# would set it.
ip link set "$IF" up
echo 1 >/sys/class/net/$IF/threaded
data k-podman-version podman version

### k: podman load of the oci-archive, then kube play of the shipped files
T0=$(uptime_s)
if data k-load podman load -i /e2e/numairqd.tar; then
	pass k-load "$(podman images --digests --format '{{.Repository}}:{{.Tag}} {{.Digest}}')"
else
	fail k-load "podman load exit status $?"
fi
metric k_load_ms "$(elapsed_ms "$T0")"
# The archive's index names the image with the DaemonSet's reference.
if podman image exists "$IMG"; then
	pass k-named "$IMG"
else
	fail k-named "podman load did not name it $IMG: $(podman images --format '{{.ID}} {{.Repository}}:{{.Tag}}' | tr '\n' ' ')"
	podman tag "$(podman images -q | head -n 1)" "$IMG"
fi
expect_eq k-digest "$(podman image inspect --format '{{.Digest}}' "$IMG" 2>&1)" "@DIGEST@"
T0=$(uptime_s)
data k-play podman kube play --configmap /e2e/configmap.yaml /e2e/daemonset.yaml
metric k_kube_play_ms "$(elapsed_ms "$T0")"
wp k-placed k_play_to_placed_ms -since "$T0" -timeout 120s \
	-queues "@ALL_Q@" -control "@ALL_C@" -hold 500ms
CTR=$(podman ps --format '{{.Names}}' | grep -v -- -infra | head -n 1)
expect_eq k-running "$(podman inspect --format '{{.State.Status}} {{.ImageName}}' "$CTR" 2>&1)" "running $IMG"
if wait_healthy "$DEADLINE_S"; then pass k-healthz 200; else fail k-healthz "status '$(http_status /healthz)'"; fi
CPID=$(podman inspect --format '{{.State.Pid}}' "$CTR")
data k-proc-status cat /proc/$CPID/status
data k-mountinfo cat /proc/$CPID/mountinfo
# The cgroup v2 root through the recursive /sys mount: isolated
# partitions are read there.
if [ -e /proc/$CPID/root/host/sys/fs/cgroup/cgroup.controllers ]; then
	pass k-cgroup-root "$(cat /proc/$CPID/root/host/sys/fs/cgroup/cpuset.cpus.isolated 2>&1 | sed 's/^$/(none isolated)/')"
else
	fail k-cgroup-root "no cgroup2 root at /host/sys/fs/cgroup in the container"
fi
data k-state guestcheck state

if until_s 30 napi_ok; then pass k-napi-pinned "$(napi_list)"; else fail k-napi-pinned "$(napi_list)"; fi
data k-plan podman exec "$CTR" /usr/local/bin/numairqd plan --config /etc/numairqd/numairqd.yaml \
	--sysfs /host/sys --procfs /host/proc --etc /host/etc --format json
START=$(podman inspect --format '{{.State.StartedAt}} {{.RestartCount}}' "$CTR")

### h: CPU @CPU@ offline and online under the pod
wp k-offline k_offline_cpu@CPU@_ms -write /sys/devices/system/cpu/cpu@CPU@/online=0 \
	-queues "@OFF_Q@" -control "@OFF_C@" -hold 300ms
wp k-online k_online_cpu@CPU@_ms -write /sys/devices/system/cpu/cpu@CPU@/online=1 \
	-queues "@ALL_Q@" -control "@ALL_C@" -hold 300ms
if until_s 30 napi_ok; then pass k-napi-after-hotplug "$(napi_list)"; else fail k-napi-after-hotplug "$(napi_list)"; fi
expect_eq k-not-restarted "$(podman inspect --format '{{.State.StartedAt}} {{.RestartCount}}' "$CTR")" "$START"
data k-state-after guestcheck state
data k-logs podman logs "$CTR"
`

// podmanPlayFile is deploy/kubernetes/daemonset.yaml with POD_IP given
// as 127.0.0.1: podman's downward API has no status.podIP.
func podmanPlayFile(ds []byte) ([]byte, error) {
	from := regexp.MustCompile(`(?m)^(\s*)- name: POD_IP\n\s*valueFrom:\n\s*fieldRef:\n\s*fieldPath: status\.podIP\n`)
	if !from.Match(ds) {
		return nil, fmt.Errorf("daemonset.yaml: no POD_IP from status.podIP to replace")
	}
	return from.ReplaceAll(ds, []byte("${1}- name: POD_IP\n${1}  value: 127.0.0.1\n")), nil
}

// buildImage runs deploy/image and returns the oci-archive, its
// reference and manifest digest.
func buildImage(t *testing.T, root string) (archive []byte, ref, digest string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "numairqd.tar")
	start := time.Now()
	cmd := exec.Command("go", "run", ".", "-o", out)
	cmd.Dir = filepath.Join(root, "deploy", "image")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("deploy/image: %v\n%s", err, stderr.String())
	}
	t.Logf("E2E-METRIC host_image_build_s %.3f", time.Since(start).Seconds())
	f := strings.Fields(string(b))
	ref, digest, ok := strings.Cut(f[len(f)-1], "@")
	if !ok {
		t.Fatalf("deploy/image printed %q: want FILE REF@DIGEST", b)
	}
	if archive, err = os.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	t.Logf("image %s@%s", ref, digest)
	return archive, ref, digest
}

func TestPodman(t *testing.T) {
	if os.Getenv("E2E_PODMAN") == "0" || os.Getenv("E2E_SYSTEMD") == "0" {
		t.Skip("E2E_PODMAN=0 or E2E_SYSTEMD=0: skipped (about 4 min; mmdebstrap builds its root on first use)")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	archive, ref, digest := buildImage(t, root)
	ds, err := os.ReadFile(filepath.Join(root, "deploy/kubernetes/daemonset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ds, []byte("image: "+ref+"\n")) {
		t.Fatalf("daemonset.yaml does not run %s, the image deploy/image builds", ref)
	}
	play, err := podmanPlayFile(ds)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := os.ReadFile(filepath.Join(root, "deploy/kubernetes/configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	g := FourNodeGuest()
	all := allCPUs(g.NumCPUs())
	pAll, pOff := g.NetPlacement(0, all), g.NetPlacement(0, without(all, hotplugCPU))
	script := strings.NewReplacer(
		"@ALL_Q@", pAll.QueueArg(), "@ALL_C@", pAll.ControlList(),
		"@OFF_Q@", pOff.QueueArg(), "@OFF_C@", pOff.ControlList(),
		"@CPU@", strconv.Itoa(hotplugCPU), "@IMAGE@", ref, "@DIGEST@", digest,
	).Replace(podmanScript)
	rootfs := podmanRoot()
	addr := g.NetAddress(0)
	s := daemonScenario{Scenario: Scenario{
		Name:   "podman",
		Guest:  g,
		Root:   &rootfs,
		Script: daemonScript(addr, shellHelpers+script),
		Files: map[string][]byte{
			"/e2e/numairqd.tar":   archive,
			"/e2e/daemonset.yaml": play,
			"/e2e/configmap.yaml": cm,
		},
		Timeout: 480 * time.Second,
		Expect: []string{"k-load", "k-named", "k-digest", "k-placed", "k-running", "k-healthz", "k-cgroup-root",
			"k-napi-pinned", "k-offline", "k-online", "k-napi-after-hotplug", "k-not-restarted"},
	}}
	s.parts = []daemonPart{{"k-kube-play", "k-", func(t *testing.T, r *Result) {
		verifyPodmanPod(t, r)
		verifyXPSIn(r, "k-state", "k-xps-written", addr)
		reportPlaced(r, "k-state", addr)
	}}}
	runDaemonScenario(t, s)
}

// verifyPodmanPod checks the container's credentials as the kernel
// reports them: CAP_NET_ADMIN and CAP_SYS_NICE alone, no new
// privileges, a seccomp filter.
func verifyPodmanPod(t *testing.T, r *Result) {
	d, ok := r.Data("k-proc-status")
	if !r.Check("k-proc-status", ok && d.RC == 0, "guest sent the container's /proc/PID/status") {
		return
	}
	st := map[string]string{}
	for _, l := range strings.Split(string(d.Output), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			st[k] = strings.TrimSpace(v)
		}
	}
	const want = "0000000000801000" // bits 12 and 23
	r.Check("k-caps", st["CapEff"] == want && st["CapBnd"] == want,
		"CapEff %s CapBnd %s, want %s (CAP_NET_ADMIN and CAP_SYS_NICE alone)", st["CapEff"], st["CapBnd"], want)
	r.Check("k-no-new-privs", st["NoNewPrivs"] == "1", "NoNewPrivs %s", st["NoNewPrivs"])
	r.Check("k-seccomp", st["Seccomp"] == "2", "Seccomp %s (2: filter)", st["Seccomp"])
	r.Check("k-uid-0", strings.HasPrefix(st["Uid"], "0\t"), "Uid %q", st["Uid"])
}

// reportPlaced reports what the pod placed: the device's IRQs and the
// CPUs they are on, as a metric (how many) and a line.
func reportPlaced(r *Result, name, addr string) {
	s, err := r.GuestState(name)
	if err != nil {
		return // verifyXPSIn reports it
	}
	var msi []int
	for _, p := range s.PCI {
		if p.Address == addr {
			msi = p.MSIIRQs
		}
	}
	var placed []string
	for _, irq := range s.IRQs {
		for _, n := range msi {
			if irq.Number == n {
				placed = append(placed, fmt.Sprintf("%d(%s)=%s", irq.Number, strings.Join(irq.Actions, ","), irq.Affinity))
			}
		}
	}
	r.Metric("k_device_irqs_placed", len(placed))
	r.t.Logf("E2E-PLACED podman %s: %s", addr, strings.Join(placed, " "))
}
