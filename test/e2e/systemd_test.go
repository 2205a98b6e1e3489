//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// The systemd scenario boots Debian 12 (systemd 252 as PID 1, udev,
// D-Bus, irqbalance enabled as its package leaves it) on FourNodeGuest,
// installs the package scripts/deb.sh builds with dpkg -i and checks the
// daemon through systemd: its unit's sandbox (ProtectSystem=strict with
// ReadWritePaths=/proc/irq, ProtectProc=invisible, PrivateDevices, the
// system call filter, IPAddressAllow=localhost, CAP_NET_ADMIN for
// xps_cpus and CAP_SYS_NICE for NAPI kthreads alone) must let it write
// /proc/irq and the XPS maps, pin the NAPI kthreads, hear
// uevents and answer on loopback, and
// reload, mode observe and the reload to enforce, the watchdog, the
// journal's priorities, restore_on_exit and
// Conflicts=irqbalance.service must work as docs/install.md says. Parts i-w
// share the boot and report as subtests, as the daemon scenarios do.
//
// E2E_SYSTEMD=0 skips it (two boots of about 3 min each under TCG
// here). The root filesystems are built once with mmdebstrap and cached
// (RootCacheDir). Parts run on both roots; where systemd 252 and 254
// differ (legacy drop-in, reload, parse warnings) the script branches on
// the guest's systemd version.

// shellHelpers are the shell functions the systemd and podman
// scenarios' scripts share.
const shellHelpers = `
# until_s SECONDS CMD...: runs CMD every 0.1 s until it exits 0, for at
# most SECONDS by the clock (wait_for counts polls, and one systemctl
# takes about half a second under TCG).
until_s() {
	_end=$(awk -v t="$1" '{ printf "%d", $1 + t }' /proc/uptime)
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$(cut -d. -f1 /proc/uptime)" -ge "$_end" ] && return 1
		usleep 100000
	done
}
elapsed_ms() { echo "$1 $(uptime_s)" | awk '{ printf "%.0f", ($2 - $1) * 1000 }'; }
# napi_ok: every NAPI kthread is pinned to the CPUs of one queue IRQ of
# the device (an unpinned one has every CPU).
napi_ok() {
	_affs=$(for i in $(ls /sys/bus/pci/devices/$ADDR/msi_irqs); do cat /proc/irq/$i/smp_affinity_list; done)
	_n=0
	for d in /proc/[0-9]*; do
		case "$(cat $d/comm 2>/dev/null)" in napi/*) ;; *) continue ;; esac
		_a=$(awk '/^Cpus_allowed_list/{print $2}' $d/status)
		echo "$_affs" | grep -qx "$_a" || return 1
		_n=$((_n + 1))
	done
	[ "$_n" -gt 0 ]
}
napi_list() {
	for d in /proc/[0-9]*; do
		case "$(cat $d/comm 2>/dev/null)" in napi/*)
			echo "$(cat $d/comm)=$(awk '/^Cpus_allowed_list/{print $2}' $d/status)";;
		esac
	done | sort | tr '\n' ' '
}
`

const systemdScript = `
ip link set lo up
UNIT=numairqd.service
DEB=/e2e/numairqd.deb
DROPIN=/etc/systemd/system/numairqd.service.d
SD=$(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')

UNIT_DEADLINE_S=30

# prop NAME [UNIT]: one property of the unit.
prop() { systemctl show -P "$1" "${2:-$UNIT}"; }
# unit_state UNIT: its state, main PID and restart count, on one line.
unit_state() { systemctl show -p ActiveState -p SubState -p MainPID -p NRestarts "$1" | tr '\n' ' '; }
is_state() { [ "$(prop ActiveState "$1")" = "$2" ]; }
# check_state CHECK UNIT WANT: UNIT's ActiveState becomes WANT.
check_state() {
	if until_s "$UNIT_DEADLINE_S" is_state "$2" "$3"; then
		pass "$1" "$2 $(unit_state "$2")"
	else
		fail "$1" "$2 is $(unit_state "$2"), want ActiveState=$3: $(journalctl -b -u "$2" -n 5 --no-pager -o cat | tr '\n' ' ')"
	fi
}
# net_affinities: "IRQ LIST" for each of the virtio-net's IRQs.
net_affinities() {
	for _i in $(ls /sys/bus/pci/devices/$ADDR/msi_irqs); do
		echo "$_i $(cat /proc/irq/$_i/smp_affinity_list)"
	done
}
# wp_field LINE KEY: the KEY=VALUE field of a wait-placement line.
wp_field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# metric_of NAME VALUE: a metric, when there is a value.
metric_of() { [ -z "$2" ] || metric "$1" "$2"; }

### i: irqbalance as its package left it, then dpkg -i, which starts numairqd
check_state i-irqbalance-running irqbalance.service active
data i-before guestcheck state
T0=$(uptime_s)
if data i-dpkg dpkg -i "$DEB"; then
	pass i-dpkg "$(dpkg-query -W -f '${Package} ${Version} ${db:Status-Status}' numairqd)"
else
	fail i-dpkg "dpkg -i exit status $?"
fi
metric i_dpkg_ms "$(elapsed_ms "$T0")"
check_state i-started "$UNIT" active
check_state i-irqbalance-stopped irqbalance.service inactive
expect_eq i-enabled "$(systemctl is-enabled numairqd)" enabled
expect_eq i-no-dropin "$(ls "$DROPIN" 2>/dev/null)" ""
expect_eq i-type "$(prop Type)" notify
expect_eq i-exec-reload "$(prop ExecReload | grep -o 'argv\[\]=[^;]*')" 'argv[]=/usr/sbin/numairqd reload --pid $MAINPID '
wp i-placed i_dpkg_to_placed_ms -since "$T0" -queues "@ALL_Q@" -control "@ALL_C@" -hold 500ms
data i-unit systemctl cat "$UNIT"
data i-version /usr/sbin/numairqd --version

### s: systemctl start, from known affinities, with restore_on_exit
systemctl stop "$UNIT"
check_state s-stopped "$UNIT" inactive
for irq in $(ls /sys/bus/pci/devices/$ADDR/msi_irqs); do echo 0-7 >/proc/irq/$irq/smp_affinity_list; done
net_affinities >/tmp/orig
# The config is a link into a directory of its own: the daemon watches
# /etc/numairqd, so an edit of the target reaches it only by a reload
# (part r tests systemctl reload, not the file watch).
mkdir -p /etc/numairqd/e2e
printf 'listen: "127.0.0.1:9768"\nrestore_on_exit: true\n' >/etc/numairqd/e2e/numairqd.yaml
ln -sf e2e/numairqd.yaml "$CFG"
T0=$(uptime_s)
wp s-placed s_start_to_placed_ms -exec "systemctl start $UNIT" -queues "@ALL_Q@" -control "@ALL_C@" -hold 500ms
metric s_systemctl_start_ms "$(elapsed_ms "$T0")"
check_state s-active "$UNIT" active
PID=$(prop MainPID)
data s-proc-status cat /proc/$PID/status
data s-state guestcheck state
data s-security systemd-analyze security --no-pager "$UNIT"
data s-security-offline systemd-analyze security --no-pager --offline=true /lib/systemd/system/numairqd.service
if wait_healthy "$DEADLINE_S"; then pass s-healthz 200; else fail s-healthz "status '$(http_status /healthz)'"; fi
# Threaded NAPI on: the sandboxed daemon pins the kthreads to their
# queue's IRQ CPUs (CAP_SYS_NICE: they hold every capability).
IF=$(ls /sys/bus/pci/devices/$ADDR/virtio*/net)
ip link set "$IF" up
echo 1 >/sys/class/net/$IF/threaded
if until_s 30 napi_ok; then pass s-napi-pinned "$(napi_list)"; else fail s-napi-pinned "$(napi_list)"; fi

### h: CPU @CPU@ offline and online: uevents reach the sandboxed daemon
wp h-offline h_offline_cpu@CPU@_ms -write /sys/devices/system/cpu/cpu@CPU@/online=0 \
	-queues "@OFF_Q@" -control "@OFF_C@" -hold 300ms
wp h-online h_online_cpu@CPU@_ms -write /sys/devices/system/cpu/cpu@CPU@/online=1 \
	-queues "@ALL_Q@" -control "@ALL_C@" -hold 300ms
sleep 3
expect_eq h-no-fight "$(journalctl -b -u "$UNIT" -o cat --no-pager | grep -c 'keeps moving this IRQ off')" 0

### m: /metrics on 127.0.0.1 (IPAddressAllow=localhost)
expect_eq m-status "$(http_status /metrics)" 200
data m-metrics wget -q -O - "$URL/metrics"

### r: systemctl reload with banned_cpus @BAN@: placed when systemctl returns
printf 'listen: "127.0.0.1:9768"\nrestore_on_exit: true\nbanned_cpus: "@BAN@"\n' >/etc/numairqd/e2e/numairqd.yaml
n=$(prop NRestarts)
T0=$(uptime_s)
out=$(guestcheck wait-placement -pci "$ADDR" -timeout "${DEADLINE_S}s" -exec "systemctl reload $UNIT" \
	-queues "@BAN_Q@" -control "@BAN_C@" -hold 500ms 2>&1)
rc=$?
metric_of r_reload_to_placed_ms "$(wp_field "$out" ms)"
metric_of r_systemctl_reload_ms "$(wp_field "$out" write_ms)"
if [ "$rc" = 0 ]; then pass r-applied "$out"; else fail r-applied "$out"; fi
# first= is the first poll after systemctl returned, irqs= the placement
# matched: equal when the reload was complete before systemctl returned
# (ExecReload=numairqd reload waits for it, on every systemd).
if [ "$rc" = 0 ] && [ "$(wp_field "$out" first)" = "$(wp_field "$out" irqs)" ]; then
	pass r-applied-on-return "first poll after systemctl reload returned: $(wp_field "$out" first)"
else
	fail r-applied-on-return "systemctl reload returned before the new placement: first poll $(wp_field "$out" first), placed $(wp_field "$out" irqs)"
fi
expect_eq r-same-process "$(prop MainPID) $(prop NRestarts)" "$PID $n"
# With the daemon stopped, systemctl reload waits for it (it returned at
# once under systemd 252's ExecReload=/bin/kill -HUP).
rm -f /tmp/reload.done
kill -STOP "$PID"
( systemctl reload "$UNIT"; echo "rc=$? uptime=$(uptime_s)" >/tmp/reload.done ) &
sleep 3
early=
[ -e /tmp/reload.done ] && early="returned ($(cat /tmp/reload.done)) while numairqd $PID was stopped"
kill -CONT "$PID"
until_s "$UNIT_DEADLINE_S" test -e /tmp/reload.done
expect_eq r-waits-for-daemon "$early" ""
expect_eq r-frozen-reload-status "$(cut -d' ' -f1 /tmp/reload.done 2>&1)" rc=0
data r-journal journalctl -b -u "$UNIT" -o short-monotonic --no-pager

### j: the journal at warning and above
expect_eq j-journald "$(prop ActiveState systemd-journald.service)" active
data j-warning journalctl -b -u "$UNIT" -p warning -o json --no-pager

# After the journal check: a rejected reload logs at error, as it should.
# A rejected config fails systemctl reload and keeps the daemon.
printf 'listen: "127.0.0.1:9768"\nrestore_on_exit: true\nbanned_cpus: "@BAN@"\nresync_interval: soon\n' >/etc/numairqd/e2e/numairqd.yaml
if systemctl reload "$UNIT" >/tmp/reload.out 2>&1; then
	fail r-rejected-fails "systemctl reload of a bad config exited 0"
else
	pass r-rejected-fails "$(journalctl -b -u "$UNIT" -n 3 --no-pager -o cat | grep -m 1 'rejected the config')"
fi
expect_eq r-rejected-same-process "$(prop MainPID) $(prop ActiveState)" "$PID active"
printf 'listen: "127.0.0.1:9768"\nrestore_on_exit: true\nbanned_cpus: "@BAN@"\n' >/etc/numairqd/e2e/numairqd.yaml

### x: systemctl stop writes back the affinities found at start
T0=$(uptime_s)
systemctl stop "$UNIT"
metric x_systemctl_stop_ms "$(elapsed_ms "$T0")"
check_state x-stopped "$UNIT" inactive
net_affinities >/tmp/after
if cmp -s /tmp/orig /tmp/after; then
	pass x-restored "$(tr '\n' ',' </tmp/after)"
else
	fail x-restored "at start: $(tr '\n' ',' </tmp/orig) after stop: $(tr '\n' ',' </tmp/after)"
fi

### o: mode observe writes nothing; systemctl reload to enforce places at that reload
printf 'listen: "127.0.0.1:9768"\nmode: observe\nrestore_on_exit: true\nbanned_cpus: "@BAN@"\n' >/etc/numairqd/e2e/numairqd.yaml
systemctl start "$UNIT"
check_state o-active "$UNIT" active
if wait_healthy "$DEADLINE_S"; then pass o-healthz 200; else fail o-healthz "status '$(http_status /healthz)'"; fi
net_affinities >/tmp/o-observed
if cmp -s /tmp/orig /tmp/o-observed; then
	pass o-wrote-nothing "$(tr '\n' ',' </tmp/o-observed)"
else
	fail o-wrote-nothing "at start: $(tr '\n' ',' </tmp/orig) observing: $(tr '\n' ',' </tmp/o-observed)"
fi
expect_eq o-mode-observe "$(wget -q -O - "$URL/metrics" | grep '^numairqd_mode{mode="observe"}')" 'numairqd_mode{mode="observe"} 1'
sed -i 's/^mode: observe$/mode: enforce/' /etc/numairqd/e2e/numairqd.yaml
wp o-enforced o_reload_to_placed_ms -exec "systemctl reload $UNIT" -queues "@BAN_Q@" -control "@BAN_C@" -hold 500ms
expect_eq o-mode-enforce "$(wget -q -O - "$URL/metrics" | grep '^numairqd_mode{mode="enforce"}')" 'numairqd_mode{mode="enforce"} 1'
systemctl stop "$UNIT"
check_state o-stopped "$UNIT" inactive
net_affinities >/tmp/o-after
if cmp -s /tmp/orig /tmp/o-after; then
	pass o-restored "$(tr '\n' ',' </tmp/o-after)"
else
	fail o-restored "at start: $(tr '\n' ',' </tmp/orig) after stop: $(tr '\n' ',' </tmp/o-after)"
fi

### c: irqbalance running; systemctl start numairqd stops it (Conflicts=)
systemctl start irqbalance.service
check_state c-irqbalance-running irqbalance.service active
wp c-placed c_start_to_placed_ms -exec "systemctl start $UNIT" -queues "@BAN_Q@" -control "@BAN_C@" -hold 500ms
check_state c-irqbalance-stopped irqbalance.service inactive
check_state c-active "$UNIT" active

### w: WatchdogSec=@WD@s; SIGSTOP the daemon: systemd kills and restarts it
mkdir -p "$DROPIN"
printf '[Service]\nWatchdogSec=@WD@s\n' >"$DROPIN/e2e-watchdog.conf"
systemctl daemon-reload
systemctl restart "$UNIT"
check_state w-active "$UNIT" active
expect_eq w-watchdog-usec "$(prop WatchdogUSec)" "@WD@s"
PID=$(prop MainPID)
n=$(prop NRestarts)
# Watchdog pings keep it alive meanwhile.
sleep $((@WD@ * 2))
expect_eq w-alive-with-watchdog "$(prop MainPID) $(prop NRestarts)" "$PID $n"
T0=$(uptime_s)
kill -STOP "$PID"
restarted() {
	_s=$(systemctl show -p ActiveState -p MainPID -p NRestarts "$UNIT")
	case $_s in *ActiveState=active*) ;; *) return 1 ;; esac
	echo "$_s" | grep -qx "MainPID=$PID" && return 1
	[ "$(echo "$_s" | sed -n 's/^NRestarts=//p')" -gt "$n" ]
}
if until_s 60 restarted; then
	metric w_sigstop_to_restarted_ms "$(elapsed_ms "$T0")"
	pass w-restarted "new MainPID $(prop MainPID), NRestarts $(prop NRestarts); $(journalctl -b -u "$UNIT" -o cat --no-pager | grep -i -m 1 watchdog)"
else
	fail w-restarted "after SIGSTOP of $PID: $(unit_state "$UNIT")"
fi
wp w-placed w_restart_to_placed_ms -queues "@BAN_Q@" -control "@BAN_C@" -hold 500ms
data w-journal journalctl -b -u "$UNIT" -o short-monotonic --no-pager
rm -rf "$DROPIN"
systemctl daemon-reload

### f: irqbalance started beside numairqd and a loop moving one queue IRQ
### to banned CPU @BAN@: a fight, named, backed off, and over after them
# A resync every 5 s, so that the loop's first move is seen soon.
printf 'listen: "127.0.0.1:9768"\nrestore_on_exit: true\nbanned_cpus: "@BAN@"\nresync_interval: 5s\n' >/etc/numairqd/e2e/numairqd.yaml
wp f-placed f_restart_to_placed_ms -exec "systemctl restart $UNIT" -queues "@BAN_Q@" -control "@BAN_C@" -hold 500ms
FIRQ=
for _i in $(ls /sys/bus/pci/devices/$ADDR/msi_irqs); do
	grep -q "^ *$_i:.*-input\.0\$" /proc/interrupts && FIRQ=$_i
done
net_affinities | grep -v "^$FIRQ " >/tmp/f-others
fights() { journalctl -b -u "$UNIT" -o cat --no-pager | grep -c 'keeps moving this IRQ off'; }
F0=$(fights)
/usr/sbin/irqbalance --foreground >/tmp/irqbalance.log 2>&1 &
IBPID=$!
T0=$(uptime_s)
( n=0; end=$(( $(cut -d. -f1 /proc/uptime) + @FIGHT_S@ ))
  while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do
	echo @BAN@ >/proc/irq/$FIRQ/smp_affinity_list && n=$((n + 1)); usleep 500000
  done; echo "$n" >/tmp/f-loop ) &
LOOP=$!
fight_on() { wget -q -O - "$URL/status" | tr -d ' \n' | grep -q "\"fights\":\[{\"irq\":$FIRQ,[^]]*\"kind\":\"irqbalance\""; }
if until_s 60 fight_on; then
	metric f_loop_to_fight_ms "$(elapsed_ms "$T0")"
	pass f-status "$(wget -q -O - "$URL/status" | tr -d ' \n' | grep -o '"fights":\[[^]]*\]')"
else
	fail f-status "no fight of IRQ $FIRQ by irqbalance in /status: $(wget -q -O - "$URL/status" | tr -d ' \n' | grep -o '"fights":\[[^]]*\]')"
fi
expect_eq f-metric "$(wget -q -O - "$URL/metrics" | grep '^numairqd_irqs_in_fight{writer="irqbalance"}')" 'numairqd_irqs_in_fight{writer="irqbalance"} 1'
others() { net_affinities | grep -v "^$FIRQ " | cmp -s - /tmp/f-others; }
if until_s 20 others; then pass f-others-placed "$(net_affinities | tr '\n' ,)"; else fail f-others-placed "before: $(tr '\n' , </tmp/f-others) now: $(net_affinities | tr '\n' ,)"; fi
wait "$LOOP"
kill "$IBPID"
wait "$IBPID"
metric f_loop_writes "$(cat /tmp/f-loop)"
expect_eq f-warned-once "$(( $(fights) - F0 ))" 1
data f-journal journalctl -b -u "$UNIT" -o cat --no-pager
T1=$(uptime_s)
out=$(guestcheck wait-placement -pci "$ADDR" -timeout 330s -queues "@BAN_Q@" -control "@BAN_C@" -hold 500ms 2>&1)
rc=$?
metric f_writers_stopped_to_placed_ms "$(elapsed_ms "$T1")"
if [ "$rc" = 0 ]; then pass f-whole-again "$out"; else fail f-whole-again "$out"; fi
over() { journalctl -b -u "$UNIT" -o cat --no-pager | grep 'fight over' | grep -q "\"irq\": $FIRQ,"; }
if until_s 60 over; then pass f-over "$(journalctl -b -u "$UNIT" -o cat --no-pager | grep 'fight over' | tail -n 1)"; else fail f-over "no 'fight over' line for IRQ $FIRQ"; fi
data f-journal-end journalctl -b -u "$UNIT" -o cat --no-pager
systemctl stop "$UNIT"
`

const (
	watchdogSec  = 3  // the test drop-in's WatchdogSec
	fightSeconds = 90 // how long part f's loop moves its IRQ
)

func TestSystemd(t *testing.T) {
	if os.Getenv("E2E_SYSTEMD") == "0" {
		t.Skip("E2E_SYSTEMD=0: skipped (about 6 min; mmdebstrap builds its roots on first use)")
	}
	t.Run("bookworm", func(t *testing.T) { runSystemdScenario(t, "systemd-bookworm", bookwormRoot()) })
	t.Run("backports", func(t *testing.T) { runSystemdScenario(t, "systemd-backports", backportsRoot()) })
}

// runSystemdScenario runs systemdScript on FourNodeGuest booted from root.
func runSystemdScenario(t *testing.T, name string, root DebianRoot) {
	g := FourNodeGuest()
	all := allCPUs(g.NumCPUs())
	pAll := g.NetPlacement(0, all)
	pOff := g.NetPlacement(0, without(all, hotplugCPU))
	pBan := g.NetPlacement(0, without(all, bannedCPU))
	script := strings.NewReplacer(
		"@ALL_Q@", pAll.QueueArg(), "@ALL_C@", pAll.ControlList(),
		"@OFF_Q@", pOff.QueueArg(), "@OFF_C@", pOff.ControlList(),
		"@BAN_Q@", pBan.QueueArg(), "@BAN_C@", pBan.ControlList(),
		"@CPU@", strconv.Itoa(hotplugCPU), "@FIGHT_S@", strconv.Itoa(fightSeconds), "@BAN@", strconv.Itoa(bannedCPU), "@WD@", strconv.Itoa(watchdogSec),
	).Replace(systemdScript)
	s := daemonScenario{Scenario: Scenario{
		Name:    name,
		Guest:   g,
		Root:    &root,
		Script:  daemonScript(g.NetAddress(0), shellHelpers+script),
		Files:   map[string][]byte{"/e2e/numairqd.deb": buildDeb(t)},
		Timeout: 720 * time.Second,
		Expect: []string{
			"i-irqbalance-running", "i-dpkg", "i-started", "i-irqbalance-stopped", "i-enabled", "i-no-dropin", "i-type", "i-exec-reload", "i-placed",
			"s-stopped", "s-placed", "s-active", "s-healthz", "s-napi-pinned",
			"h-offline", "h-online", "h-no-fight",
			"m-status",
			"r-applied", "r-applied-on-return", "r-same-process", "r-waits-for-daemon", "r-frozen-reload-status", "r-rejected-fails", "r-rejected-same-process",
			"j-journald", "x-stopped", "x-restored",
			"o-active", "o-healthz", "o-wrote-nothing", "o-mode-observe", "o-enforced", "o-mode-enforce", "o-stopped", "o-restored",
			"c-irqbalance-running", "c-placed", "c-irqbalance-stopped", "c-active",
			"w-active", "w-watchdog-usec", "w-alive-with-watchdog", "w-restarted", "w-placed",
			"f-placed", "f-status", "f-metric", "f-others-placed", "f-warned-once", "f-whole-again", "f-over",
		},
	}}
	s.parts = []daemonPart{
		{"i-dpkg-install", "i-", func(t *testing.T, r *Result) {}},
		{"s-systemctl-start", "s-", func(t *testing.T, r *Result) { verifySandbox(t, r); verifyXPSWritten(r, g.NetAddress(0)) }},
		{"h-cpu-hotplug", "h-", func(t *testing.T, r *Result) {}},
		{"m-metrics", "m-", func(t *testing.T, r *Result) { verifySystemdMetrics(t, r, g.NetAddress(0)) }},
		{"r-reload", "r-", func(t *testing.T, r *Result) {}},
		{"j-journal", "j-", verifyJournal},
		{"x-restore-on-stop", "x-", func(t *testing.T, r *Result) {}},
		{"o-observe-then-enforce", "o-", func(t *testing.T, r *Result) {}},
		{"c-conflicts-irqbalance", "c-", func(t *testing.T, r *Result) {}},
		{"w-watchdog", "w-", func(t *testing.T, r *Result) {}},
		{"f-fight", "f-", verifyFight},
	}
	runDaemonScenario(t, s)
}

// verifyXPSWritten checks that the sandboxed daemon wrote the XPS maps.
func verifyXPSWritten(r *Result, addr string) { verifyXPSIn(r, "s-state", "s-xps-written", addr) }

// verifyXPSIn checks the guest state sent as data name: each tx queue's
// xps_cpus holds its completion IRQ's smp_affinity_list (not its
// effective CPU: an idle queue's IRQ moves at its next interrupt), and
// every online CPU sends on some queue; the verdict is check.
func verifyXPSIn(r *Result, name, check, addr string) {
	s, err := r.GuestState(name)
	if !r.Check(name, err == nil, "%v", err) {
		return
	}
	rep := s.XPS(addr)
	var outside []string
	for _, q := range rep.Queues {
		xps, err1 := cpumask.ParseList(q.XPS)
		var aff cpumask.Mask
		var err2 error = fmt.Errorf("no completion IRQ")
		for _, irq := range s.IRQs {
			if irq.Number == q.IRQ {
				aff, err2 = cpumask.ParseList(irq.Affinity)
			}
		}
		if err1 != nil || err2 != nil || aff.IsEmpty() || !aff.IsSubsetOf(xps) {
			outside = append(outside, fmt.Sprintf("tx-%d xps %q irq %d (%v %v)", q.Index, q.XPS, q.IRQ, err1, err2))
		}
	}
	r.Check(check, len(rep.Queues) > 0 && len(outside) == 0 && len(rep.Uncovered) == 0 && len(rep.Errors) == 0,
		"tx queues whose xps_cpus lacks their completion IRQ's CPUs: %v; uncovered CPUs %v; %s", outside, rep.Uncovered, rep)
}

// verifySandbox checks the running daemon's credentials as the kernel
// reports them and reports systemd-analyze security's exposure figure.
func verifySandbox(t *testing.T, r *Result) {
	if d, ok := r.Data("s-proc-status"); r.Check("s-proc-status", ok && d.RC == 0, "guest sent /proc/PID/status") {
		st := map[string]string{}
		for _, l := range strings.Split(string(d.Output), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok {
				st[k] = strings.TrimSpace(v)
			}
		}
		// CAP_NET_ADMIN is bit 12: xps_cpus_store() asks for it;
		// CAP_SYS_NICE bit 23: cap_safe_nice() asks for it to pin a
		// NAPI kthread.
		const caps = "0000000000801000"
		r.Check("s-caps", st["CapEff"] == caps && st["CapBnd"] == caps,
			"CapEff %s CapBnd %s, want %s (CAP_NET_ADMIN and CAP_SYS_NICE alone)", st["CapEff"], st["CapBnd"], caps)
		r.Check("s-no-new-privs", st["NoNewPrivs"] == "1", "NoNewPrivs %s", st["NoNewPrivs"])
		r.Check("s-seccomp", st["Seccomp"] == "2", "Seccomp %s (2: filter)", st["Seccomp"])
	}
	exposure := regexp.MustCompile(`Overall exposure level for numairqd\.service: ([0-9.]+) (\S+)`)
	for _, name := range []string{"s-security", "s-security-offline"} {
		d, ok := r.Data(name)
		if !ok {
			r.Check(name, false, "guest sent no data %s", name)
			continue
		}
		m := exposure.FindSubmatch(d.Output)
		if !r.Check(name, m != nil, "systemd-analyze security (exit %d): %s", d.RC, lastLines(string(d.Output), 1)) {
			continue
		}
		metric := "s_security_exposure"
		if name == "s-security-offline" {
			metric += "_offline"
		}
		r.Metric(metric, string(m[1]))
		r.Metric(metric+"_verdict", string(m[2]))
	}
}

// verifySystemdMetrics checks that the scrape over loopback came from
// the daemon placing the virtio-net.
func verifySystemdMetrics(t *testing.T, r *Result, addr string) {
	d, ok := r.Data("m-metrics")
	if !r.Check("m-metrics", ok && d.RC == 0 && len(d.Output) > 0, "GET /metrics: %d bytes", len(d.Output)) {
		return
	}
	samples := parseProm(string(d.Output))
	n := len(promFind(samples, "numairqd_irqs", map[string]string{"device": addr}))
	r.Check("m-device-series", n > 0, "%d numairqd_irqs series for device %s", n, addr)
	_, ok = promValue(samples, "numairqd_build_info", nil)
	r.Check("m-build-info", ok, "numairqd_build_info present")
	// The NVMe's queue IRQs, which the kernel manages: seen as such.
	managed := 0.0
	for _, x := range promFind(samples, "numairqd_irqs", map[string]string{"state": "managed"}) {
		managed += x.Value
	}
	r.Metric("m_managed_irqs", managed)
	r.Check("m-managed-irqs", managed > 0, "numairqd_irqs{state=\"managed\"} sums to %v", managed)
}

// managedLine says a journal message is numairqd's warning about
// kernel-managed IRQs (NVMe's queues) on CPUs it bans.
var managedLine = regexp.MustCompile(`kernel-managed IRQs have banned CPUs`)

// journalEntry is what the checks read of `journalctl -o json`.
type journalEntry struct {
	Message    any    `json:"MESSAGE"` // a string, or bytes as numbers when not UTF-8
	Priority   string `json:"PRIORITY"`
	Identifier string `json:"SYSLOG_IDENTIFIER"`
	PID        string `json:"_PID"`
}

func (e journalEntry) text() string {
	if m, ok := e.Message.(string); ok {
		return m
	}
	return fmt.Sprint(e.Message)
}

func parseJournal(b []byte) []journalEntry {
	var out []journalEntry
	for _, l := range strings.Split(string(b), "\n") {
		var e journalEntry
		if json.Unmarshal([]byte(l), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// verifyJournal checks `journalctl -u numairqd -p warning`: nothing
// there but numairqd's warnings about kernel-managed IRQs on banned
// CPUs (part r bans CPU 4, which NVMe queues of the guest cover), and
// at least one of those.
func verifyJournal(t *testing.T, r *Result) {
	w, ok := r.Data("j-warning")
	if !r.Check("j-journal", ok && w.RC == 0, "journalctl -p warning exit %d", w.RC) {
		return
	}
	var other []string
	managed := 0
	warnings := parseJournal(w.Output)
	for _, e := range warnings {
		if e.PID != "1" && managedLine.MatchString(e.text()) {
			managed++
			continue
		}
		other = append(other, fmt.Sprintf("<%s> %s[%s]: %s", e.Priority, e.Identifier, e.PID, e.text()))
	}
	r.Metric("j_warning_lines", len(warnings))
	r.Metric("j_managed_irq_warnings", managed)
	r.Check("j-managed-warnings", managed > 0, "%d warnings about kernel-managed IRQs on banned CPUs, want at least 1", managed)
	r.Check("j-nothing-else", len(other) == 0, "%d lines at warning and above that are not about managed IRQs: %q", len(other), other)
}

var (
	debOnce sync.Once
	debVal  []byte
	debErr  error
)

// buildDeb builds the package with scripts/deb.sh, once per test
// binary, without lintian (DEB_LINTIAN=0: the package's own check).
func buildDeb(t *testing.T) []byte {
	t.Helper()
	debOnce.Do(func() {
		start := time.Now()
		debVal, debErr = runDebSh()
		t.Logf("E2E-METRIC host_deb_build_s %.3f", time.Since(start).Seconds())
	})
	if debErr != nil {
		t.Fatalf("build the Debian package: %v", debErr)
	}
	return debVal
}

func runDebSh() ([]byte, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	dir, err := binaryDir()
	if err != nil {
		return nil, err
	}
	outDir := filepath.Join(dir, "deb")
	cmd := exec.Command(filepath.Join(root, "scripts", "deb.sh"), outDir)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "DEB_LINTIAN=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("scripts/deb.sh: %w\n%s%s", err, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	return os.ReadFile(lines[len(lines)-1])
}

// rewriteLine is numairqd's info line for a backoff rewrite, with the
// IRQ and the interval it waited.
var rewriteLine = regexp.MustCompile(`rewriting an IRQ another writer keeps moving.*"irq": (\d+),.*"interval": "([^"]+)"`)

// verifyFight counts numairqd's backoff rewrites of the IRQ part f's
// loop moved (from the journal at the loop's end): well below the
// loop's writes, after growing intervals.
func verifyFight(t *testing.T, r *Result) {
	d, ok := r.Data("f-journal")
	loop := -1
	for _, m := range r.Metrics {
		if m.Name == "f_loop_writes" {
			loop, _ = strconv.Atoi(m.Value)
		}
	}
	if !r.Check("f-journal", ok && d.RC == 0 && loop > 0, "journal at the loop's end (exit %d), %d loop writes", d.RC, loop) {
		return
	}
	var intervals []time.Duration
	irq := ""
	for _, m := range rewriteLine.FindAllStringSubmatch(string(d.Output), -1) {
		iv, err := time.ParseDuration(m[2])
		if err != nil || irq != "" && m[1] != irq {
			r.Check("f-rewrites-parsed", false, "rewrite line of IRQ %s interval %q (%v), want one IRQ (%s)", m[1], m[2], err, irq)
			return
		}
		irq = m[1]
		intervals = append(intervals, iv)
	}
	// Overwrites (3) writes start the fight; the backoff's are counted.
	writes := 3 + len(intervals)
	r.Metric("f_backoff_rewrites", len(intervals))
	r.Metric("f_numairqd_writes", writes)
	r.Check("f-backed-off", len(intervals) > 0 && writes*5 < loop, "numairqd wrote the IRQ %d times (%d after backing off: %v) while the loop wrote it %d times",
		writes, len(intervals), intervals, loop)
	grow := len(intervals) >= 2
	for i := 1; i < len(intervals); i++ {
		grow = grow && intervals[i] > intervals[i-1]
	}
	r.Check("f-intervals-grow", grow, "backoff intervals %v", intervals)
}
