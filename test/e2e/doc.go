// Package e2e boots Debian's kernel under QEMU (TCG) with a NUMA
// topology, multi-queue virtio-net and NVMe behind PCIe expander buses,
// runs a scenario script inside a busybox initramfs and checks the
// result markers the guest prints.
//
// Everything that boots a guest is behind the build tag e2e, so
// `go test ./...` skips it. Run it as root with test/e2e/run.sh (checks
// the prerequisites, then runs `go test -tags e2e -count=1 -v
// ./test/e2e/`).
//
// A scenario is a Guest (the machine QEMU emulates), a shell script run
// inside it, and optional host-side checks on what the script sent back:
//
//	func TestHotplug(t *testing.T) {
//		g := FourNodeGuest()
//		Run(t, Scenario{
//			Name:  "hotplug",
//			Guest: g,
//			Script: `
//	numairqd run & sleep 2
//	echo 0 > /sys/devices/system/cpu/cpu5/online
//	wait_for 10 sh -c '...' && pass restored "..." || fail restored "..."
//	data after guestcheck state`,
//			Expect: []string{"restored"},
//			Verify: func(t *testing.T, r *Result) {
//				s, err := r.GuestState("after")
//				...
//				r.Check("queue0-on-node2", ..., "irq %d on %s", ...)
//			},
//		})
//	}
//
// In the guest, /bin holds busybox, guestcheck (the agent: see
// test/e2e/guestcheck) and numairqd (always built: a build failure
// fails the test, nothing is skipped); the helpers of guest/lib.sh
// print the markers. `guestcheck wait-placement` does an action (a
// sysfs write, a command such as ethtool -L, a SIGHUP), waits until a device's queue IRQs are on
// given CPUs and stay there, and prints how long that took.
//
// Every boot runs in a network namespace of its own (labnet.go) that
// holds only lo and the taps of the guest's NICs, so nothing the guest
// sends, and nothing the harness generates, reaches another network. A
// script asks for traffic with `traffic NIC FLOWS RATE SECONDS`
// (guest/lib.sh); the harness starts test/trafficgen inside that
// namespace at the NIC's MAC (traffic.go), and `guestcheck sample`
// records the guest's interrupt, softirq and rx counters.
//
// daemon_test.go runs `numairqd run` in the guest: parts a-e (first
// round, CPU hotplug, driver re-bind, SIGHUP, /metrics and /plan) share
// one boot of FourNodeGuest and report as subtests of their own; parts
// f and g share one of MANAGuest: its linear placement, then channel
// changes with ethtool -L, after which virtio-net rewrites its queues'
// affinities and a round labelled "channels" must put them back.
// napi_test.go turns threaded NAPI on in MANAGuest and checks
// pkg/napi's discovery, run on a copy of the guest's /proc, against
// which thread wakes for each queue's traffic. traffic_test.go checks, in both
// guests with packets flowing, that every busy queue IRQ fires on the
// CPU of its plan. Expected placements come from the
// Guest alone (expect.go: Guest.NetPlacement). Every expected state may
// take up to placementDeadline; latencies are printed, never asserted
// (the bench judges speed). The boot fails the test on a timeout, a
// kernel panic, a missing E2E-END or expected check, a FAIL check or a
// non-zero script exit. A boot that QEMU itself broke (it died on a
// signal before E2E-END, or /init never started) is retried once and
// logged as E2E-RETRY; one with a failed check never is.
//
// xps_test.go checks issue 27 in one boot of FourNodeGuest: in the
// driver's state, after numairqd's first round, with CPU 5 offline and
// back, and after a re-bind, every tx queue's completion IRQ
// (virtioN-output.K) fires on a CPU of its queues/tx-K/xps_cpus and
// every online CPU is in some queue's mask; and `guestcheck send`
// (pinned UDP senders, unconnected sendto to 198.18.0.2 on the tap
// side, which has no address, bounded) from each online CPU in turn
// sees at least 90% of its completions on its own CPU, or on the
// nearest CPU holding a completion IRQ.
//
// twonic_test.go puts two virtio-nets of 4 queue pairs on node 2 of
// FourNodeGuest, more queues than nodes 2 and 3 have CPUs, and checks
// the planner's objective for numa-hop devices after the first round,
// with CPU 5 offline and back, with one NIC unbound and bound again: no
// queue IRQ farther from node 2 than the drivers' own spread of its
// NIC puts that queue (Guest.DriverQueues), and no CPU with more queue
// IRQs than the two spreads put on one. The placement is not named in
// advance, so after each action `guestcheck wait-plan` waits until the
// daemon's newer /plan is in place and holds; mean distances and the
// busiest CPU's counts are printed as figures.
//
// capture_test.go runs `numairqd capture` in FourNodeGuest (with an
// e1000e on node 3) while the daemon runs there, sends the archive to
// the host and checks that `numairqd plan --capture` of it gives the
// daemon's /plan placement; run.sh runs it on all three kernels, so on
// 7.3 the e1000e's queue comes from the recorded netlink answers.
//
// partitions_test.go makes an isolated cgroup v2 partition of node 3's
// CPUs in FourNodeGuest while the daemon runs (6.8+; skipped on 6.1):
// every device IRQ the daemon may move leaves them, and comes back when
// the partition is removed; how long each took is a figure.
//
// systemd_test.go boots Debian 12 instead of the busybox initramfs: a
// Scenario with a Root (rootfs.go) gets a virtio disk with a Debian
// root filesystem that mmdebstrap builds from Debian's packages on first
// use and caches under /var/cache/numairqd-e2e (E2E_CACHE_DIR; rm -r to
// rebuild), attached with snapshot=on. /init loads the modules, waits for
// the devices, copies /e2e into the root and hands over to its systemd;
// e2e.service runs the script after multi-user.target (guest/systemd.sh)
// and powers off. There the package scripts/deb.sh builds is installed
// with dpkg -i and driven with systemctl: start, CPU hotplug, /metrics,
// reload, journal priorities, restore_on_exit on stop, Conflicts= with
// irqbalance, the watchdog, and systemd-analyze security's figure.
// It runs on Debian 12's systemd 252 and on bookworm-backports' 254;
// E2E_SYSTEMD=0 skips it.
package e2e
