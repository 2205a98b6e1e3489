#!/bin/sh
# /init of the e2e initramfs: mount the pseudo filesystems, load the
# modules named in /e2e/config, wait for the devices, run
# /e2e/scenario.sh with the helpers of /e2e/lib.sh, then power off.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
. /e2e/config
. /e2e/lib.sh

e2e_begin
metric guest_init_uptime_s "$(uptime_s)"

# A guard on module loading, which takes seconds: under TCG a probe
# has been seen to hold insmod for minutes (nvme on 6.12, before any
# scenario ran). Past E2E_MODULES_S seconds (/e2e/config) it prints
# the kernel's log tail, reports guest_stalled_uptime_s and powers off;
# the harness boots once more (retryReason).
(
	trap 'kill "$s"; exit 0' TERM
	sleep "$E2E_MODULES_S" &
	s=$!
	wait "$s"
	trap '' TERM
	echo "e2e: modules not loaded after $E2E_MODULES_S s; the kernel's log:"
	dmesg | tail -n 30
	metric guest_stalled_uptime_s "$(uptime_s)"
	sleep 1
	poweroff -f
) &
guard=$!
for m in $E2E_MODULES; do
	t0=$(uptime_s)
	insmod "/lib/modules/$m.ko" || fail "insmod-$m" "insmod /lib/modules/$m.ko failed"
	echo "e2e: insmod $m: $t0 -> $(uptime_s)"
done
kill "$guard"
wait "$guard" 2>/dev/null
metric guest_modules_loaded_uptime_s "$(uptime_s)"

# virtio-net probes synchronously in insmod; nvme resets its controller
# in a work item, and requests its queue IRQs there.
for a in $E2E_NET_PCI; do
	wait_for 20 test -e "/sys/bus/pci/devices/$a/driver" ||
		fail "probe-$a" "no driver bound to $a"
done
for a in $E2E_NVME_PCI; do
	wait_for 30 sh -c "grep -qx live /sys/bus/pci/devices/$a/nvme/nvme*/state" ||
		fail "probe-$a" "nvme at $a not live: $(cat /sys/bus/pci/devices/$a/nvme/nvme*/state 2>&1)"
done
metric guest_devices_ready_uptime_s "$(uptime_s)"

# A scenario with a root filesystem (E2E_ROOT, a virtio disk) runs under
# that root's systemd: copy /e2e and the guest binaries into it and hand
# over; guest/systemd.sh runs the scenario there and powers off.
if [ -n "${E2E_ROOT:-}" ]; then
	mkdir -p /newroot
	if wait_for 10 test -b "$E2E_ROOT" && mount -t ext4 "$E2E_ROOT" /newroot; then
		mkdir -p /newroot/e2e/bin
		cp -a /e2e/. /newroot/e2e/
		cp /bin/busybox /bin/guestcheck /newroot/e2e/bin/
		metric guest_switch_root_uptime_s "$(uptime_s)"
		exec 3>&-
		umount /tmp /run
		for d in dev proc sys; do mount -o move "/$d" "/newroot/$d"; done
		exec switch_root /newroot /sbin/init
	fi
	fail root-mount "cannot mount $E2E_ROOT: $(ls -l "$E2E_ROOT" 2>&1)"
	e2e_end 1
	exec 3>&-
	poweroff -f
fi

cd /e2e
(. /e2e/scenario.sh)
rc=$?
metric guest_scenario_done_uptime_s "$(uptime_s)"
e2e_end "$rc"
# The last close of the data port waits until its output has gone out.
exec 3>&-
sync
poweroff -f
