#!/bin/sh
# Second stage of a scenario with a root filesystem (Scenario.Root):
# /init loaded the modules, waited for the devices, copied /e2e into the
# Debian root and handed over to its systemd; e2e.service runs this
# after multi-user.target. It runs /e2e/scenario.sh with the helpers of
# /e2e/lib.sh, as /init does in the initramfs, then powers off.
#
# The shell is Debian's (dash): busybox's would run its own applets
# (dpkg, ip, ps, ...) before Debian's programs. Busybox's applets come
# after those in PATH, for what minbase lacks (usleep, wget).
mkdir -p /e2e/bb
/e2e/bin/busybox --install -s /e2e/bb
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:/e2e/bin:/e2e/bb
. /e2e/config
. /e2e/lib.sh

metric guest_systemd_ready_uptime_s "$(uptime_s)"
v=$(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')
[ -z "$v" ] || metric guest_systemd_version "$v"
cd /e2e
(. /e2e/scenario.sh)
rc=$?
metric guest_scenario_done_uptime_s "$(uptime_s)"
e2e_end "$rc"
exec 3>&-
sync
# Straight to the kernel: nothing in this boot is worth a clean shutdown
# (the root disk is a snapshot QEMU throws away).
systemctl --force --force poweroff
