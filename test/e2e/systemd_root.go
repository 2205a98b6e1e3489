//go:build e2e

package e2e

// bookwormPackages are what the systemd scenario's root filesystem
// holds besides minbase: systemd as PID 1 with udev, the tools the
// checks use, deb-systemd-helper for the package's maintainer scripts,
// and irqbalance, which starting numairqd must stop. No D-Bus: systemctl
// and systemd-analyze reach PID 1 on its private socket as root, and
// dbus-daemon with logind would add half a minute to each boot under TCG.
var bookwormPackages = []string{
	"systemd", "systemd-sysv", "udev", "init-system-helpers",
	"iproute2", "procps", "kmod", "irqbalance",
}

// e2eUnit runs the scenario (guest/systemd.sh, copied into /e2e by
// /init) once the system is up; the script powers the guest off.
const e2eUnit = `[Unit]
Description=numairqd e2e scenario
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/bin/sh /e2e/systemd.sh
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=infinity
`

// bookwormRoot is Debian 12 with its systemd 252 and irqbalance 1.9,
// enabled as its package leaves it. Units a test boot has no use for
// (gettys, logind, the daily timers, modprobe@ of modules the guest
// lacks) are masked; the journal stays in memory.
func bookwormRoot() DebianRoot {
	links := map[string]string{
		"/etc/systemd/system/multi-user.target.wants/e2e.service": "/etc/systemd/system/e2e.service",
	}
	for _, u := range []string{"getty.target", "apt-daily.timer", "apt-daily-upgrade.timer", "dpkg-db-backup.timer",
		"e2scrub_all.timer", "e2scrub_reap.service", "fstrim.timer", "systemd-logind.service",
		"systemd-update-utmp.service", "systemd-update-utmp-runlevel.service",
		"modprobe@configfs.service", "modprobe@dm_mod.service", "modprobe@drm.service",
		"modprobe@efi_pstore.service", "modprobe@fuse.service", "modprobe@loop.service"} {
		links["/etc/systemd/system/"+u] = "/dev/null"
	}
	return DebianRoot{
		Suite:    "bookworm",
		Mirror:   "http://deb.debian.org/debian",
		Variant:  "minbase",
		Packages: bookwormPackages,
		Files: map[string][]byte{
			"/etc/systemd/system/e2e.service":       []byte(e2eUnit),
			"/etc/hostname":                         []byte("e2e\n"),
			"/etc/machine-id":                       []byte("4e756d6169727164e2e0000000000001\n"),
			"/etc/fstab":                            []byte("/dev/vda / ext4 rw,noatime 0 0\n"),
			"/etc/systemd/journald.conf.d/e2e.conf": []byte("[Journal]\nStorage=volatile\n"),
		},
		Links:  links,
		SizeMB: 1024,
	}
}

// systemdBackports are the packages of systemd 254 in
// bookworm-backports: with them the unit runs as Type=notify-reload
// (systemd >= 253), without the package's legacy-reload drop-in.
var systemdBackports = []string{
	"systemd", "systemd-sysv", "udev", "libsystemd0", "libsystemd-shared", "libudev1",
	"libpam-systemd", "libnss-systemd",
}

// backportsRoot is bookwormRoot with systemd from bookworm-backports.
func backportsRoot() DebianRoot {
	d := bookwormRoot()
	d.Backports = systemdBackports
	return d
}

// podmanPackages are what TestPodman's root holds besides minbase:
// systemd as PID 1, podman with crun and catatonit (the pod's infra
// container), and the tools the checks use. Debian 13's podman 5: 4.3 of
// Debian 12 has no DaemonSet in kube play (added in 4.7).
var podmanPackages = []string{
	"systemd", "systemd-sysv", "udev", "iproute2", "procps", "kmod",
	"podman", "crun", "conmon", "catatonit",
}

// podmanStorage puts images and containers on the vfs driver: the
// guest's initramfs loads no overlay module, and vfs needs none (one
// small layer, copied once).
const podmanStorage = `[storage]
driver = "vfs"
runroot = "/run/containers/storage"
graphroot = "/var/lib/containers/storage"
`

// podmanContainers: cgroupfs, not systemd's cgroup manager (no D-Bus in
// the root), and no network backend probing beyond the host's network.
const podmanContainers = `[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
`

// podmanRoot is Debian 13 with podman 5, booted like bookwormRoot.
func podmanRoot() DebianRoot {
	d := bookwormRoot()
	d.Suite, d.Packages, d.SizeMB = "trixie", podmanPackages, 2048
	d.Files["/etc/containers/storage.conf"] = []byte(podmanStorage)
	d.Files["/etc/containers/containers.conf"] = []byte(podmanContainers)
	return d
}
