# Helpers for e2e scenario scripts (busybox sh). /init sources this file
# and /e2e/config before it runs /e2e/scenario.sh.
#
# Every marker line goes to the console (ttyS0, for people) and to the
# data port (ttyS1, which the host parses: kernel messages never
# interleave there):
#   E2E-BEGIN <scenario>
#   E2E-RESULT <scenario> <check> PASS|FAIL <detail...>   (no SKIP: a check that cannot run fails)
#   E2E-METRIC <name> <value>
#   E2E-DATA <name> <exit status> <base64 of the command's output>   (data port only)
#   E2E-END <scenario> <exit status of scenario.sh>

if [ -z "${E2E_DATA_FD_OPEN:-}" ]; then
	stty -F /dev/ttyS1 raw -echo 2>/dev/null
	exec 3>/dev/ttyS1
	E2E_DATA_FD_OPEN=1
fi

emit() {
	echo "$*"
	echo "$*" >&3
}

e2e_begin() { emit "E2E-BEGIN $E2E_SCENARIO"; }
e2e_end() { emit "E2E-END $E2E_SCENARIO $1"; }

# result CHECK PASS|FAIL DETAIL...
result() {
	_check=$1 _status=$2
	shift 2
	emit "E2E-RESULT $E2E_SCENARIO $_check $_status $*"
}
pass() { _c=$1; shift; result "$_c" PASS "$@"; }
fail() { _c=$1; shift; result "$_c" FAIL "$@"; }

# metric NAME VALUE
metric() { emit "E2E-METRIC $1 $2"; }

# check CHECK CMD...: PASS if CMD exits 0, with its output as detail.
check() {
	_c=$1
	shift
	if _out=$("$@" 2>&1); then
		pass "$_c" "$(echo "$_out" | tr '\n' ' ')"
	else
		fail "$_c" "exit $?: $(echo "$_out" | tr '\n' ' ')"
	fi
}

# expect_eq CHECK GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1" "$2"
	else
		fail "$1" "got '$2' want '$3'"
	fi
}

# data NAME CMD...: runs CMD and sends its output (stdout and stderr)
# and exit status to the host, which reads it with Result.Data(NAME).
# Returns CMD's exit status.
data() {
	_name=$1
	shift
	"$@" >/tmp/e2e-data 2>&1
	_rc=$?
	printf 'E2E-DATA %s %s %s\n' "$_name" "$_rc" "$(base64 -w 0 /tmp/e2e-data)" >&3
	echo "e2e: sent data $_name rc=$_rc ($(wc -c </tmp/e2e-data) bytes)"
	return $_rc
}

# traffic NIC FLOWS RATE SECONDS [WEIGHTS]: asks the host to run its
# traffic generator at NIC's MAC, inside the boot's own network
# namespace (the host reads this line on the console and starts it at
# once; it stops by itself after SECONDS, or when the guest powers off).
traffic() {
	emit "E2E-TRAFFIC $E2E_SCENARIO nic=$1 flows=$2 rate=$3 seconds=$4${5:+ weights=$5}"
}

# rx_flowing IFACE: IFACE received packets in the last half second.
rx_flowing() {
	_a=$(cat "/sys/class/net/$1/statistics/rx_packets")
	usleep 500000
	[ "$(cat "/sys/class/net/$1/statistics/rx_packets")" -gt "$_a" ]
}

# save_affinities FILE: every IRQ's smp_affinity_list, "IRQ LIST" a line.
save_affinities() {
	for _d in /proc/irq/[0-9]*; do
		[ -r "$_d/smp_affinity_list" ] && echo "${_d#/proc/irq/} $(cat "$_d/smp_affinity_list")"
	done >"$1"
}

# restore_affinities FILE: writes them back; an IRQ the kernel refuses
# (managed) or that is gone is skipped.
restore_affinities() {
	while read -r _irq _aff; do
		{ echo "$_aff" >"/proc/irq/$_irq/smp_affinity_list"; } 2>/dev/null
	done <"$1"
}

# uptime_s prints seconds since the guest kernel started.
uptime_s() { cut -d' ' -f1 /proc/uptime; }

# wait_for SECONDS CMD...: polls CMD every 0.1 s until it exits 0.
wait_for() {
	_deadline=$(($1 * 10))
	shift
	_i=0
	while ! "$@" >/dev/null 2>&1; do
		_i=$((_i + 1))
		[ "$_i" -ge "$_deadline" ] && return 1
		usleep 100000
	done
	return 0
}
