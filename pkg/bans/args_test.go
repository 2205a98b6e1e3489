package bans

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestIrqbalanceOptions: each of irqbalance's options in IRQBALANCE_ARGS
// is honoured (--banirq, --banmod: what it bans, by what) or warned
// about once, with the file, line, option and what numairqd does.
func TestIrqbalanceOptions(t *testing.T) {
	const at = "/etc/default/irqbalance:2: IRQBALANCE_ARGS "
	for _, tc := range []struct {
		name, args string
		irqs       map[int]string
		mods       map[string]string
		ignored    []string
	}{
		{name: "--banirq=N", args: "--banirq=25", irqs: map[int]string{25: "--banirq"}},
		{name: "--banirq N", args: "--banirq 25", irqs: map[int]string{25: "--banirq"}},
		{name: "-i N and -iN", args: "-i 25 -i30", irqs: map[int]string{25: "--banirq", 30: "--banirq"}},
		{name: "--banmod=NAME", args: "--banmod=ixgbe", mods: map[string]string{"ixgbe": "--banmod=ixgbe"}},
		{name: "-m NAME", args: "-m mlx5_core", mods: map[string]string{"mlx5_core": "--banmod=mlx5_core"}},
		{name: "the issue's line", args: "--banirq=25 --policyscript=/usr/local/bin/irq.sh --hintpolicy=exact",
			irqs: map[int]string{25: "--banirq"}, ignored: []string{
				at + "--policyscript=/usr/local/bin/irq.sh: numairqd runs no scripts; a device rule sets a device's policy, CPUs or node, or ignores it",
				at + "--hintpolicy=exact: numairqd ignores affinity_hint and spreads by NUMA distance; use a device rule"}},
		{name: "--oneshot", args: "--oneshot", ignored: []string{at + "--oneshot: numairqd places IRQs at start and at every change; `numairqd run --oneshot` places them once"}},
		{name: "-o", args: "-o", ignored: []string{at + "--oneshot: numairqd places IRQs at start and at every change; `numairqd run --oneshot` places them once"}},
		{name: "--debug", args: "--debug", ignored: []string{at + "--debug: numairqd's log level is its --log.level flag"}},
		{name: "--foreground", args: "-f", ignored: []string{at + "--foreground: numairqd always runs in the foreground"}},
		{name: "--journal", args: "--journal", ignored: []string{at + "--journal: numairqd logs to the journal with --log.format journald"}},
		{name: "--version", args: "-V", ignored: []string{at + "--version: `numairqd version` prints numairqd's"}},
		{name: "--powerthresh", args: "--powerthresh 2", ignored: []string{at + "--powerthresh=2: numairqd never gathers IRQs on fewer CPUs to save power; it spreads them by NUMA distance"}},
		{name: "--deepestcache", args: "-c 2", ignored: []string{at + "--deepestcache=2: numairqd spreads by NUMA distance and SMT core (a rule's mask: core), not by a cache level"}},
		{name: "--pid", args: "--pid=/run/irqbalance.pid", ignored: []string{at + "--pid=/run/irqbalance.pid: numairqd writes no pid file; systemd tracks it"}},
		{name: "--interval", args: "-t 5", ignored: []string{at + "--interval=5: numairqd acts on kernel events and re-reads everything every resync_interval; load_balance.interval paces balance: load"}},
		{name: "--migrateval", args: "--migrateval=4", ignored: []string{at + "--migrateval=4: balance: load moves a queue when the busiest CPU's load drops by load_balance.min_gain and min_drop"}},
		{name: "--banscript", args: "--banscript=/x", ignored: []string{at + "--banscript=/x: numairqd runs no scripts; a rule with policy ignore leaves IRQs alone, by device or irq_numbers"}},
		{name: "a short cluster", args: "-of", ignored: []string{
			at + "--oneshot: numairqd places IRQs at start and at every change; `numairqd run --oneshot` places them once",
			at + "--foreground: numairqd always runs in the foreground"}},
		{name: "warned once", args: "--debug -d --debug", ignored: []string{at + "--debug: numairqd's log level is its --log.level flag"}},
		{name: "unknown option", args: "--banirqs=3", ignored: []string{at + "--banirqs=3: not an irqbalance option; ignored"}},
		{name: "not an option, after --", args: "stray -- --banirq=4", ignored: []string{at + "stray: not an option; irqbalance ignores it too"}},
		{name: "quoted words", args: `--policyscript='/opt/my scripts/p.sh' "--banirq=7"`, irqs: map[int]string{7: "--banirq"},
			ignored: []string{at + "--policyscript=/opt/my scripts/p.sh: numairqd runs no scripts; a device rule sets a device's policy, CPUs or node, or ignores it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := fmt.Sprintf("# irqbalance\nIRQBALANCE_ARGS=\"%s\"\n", strings.ReplaceAll(tc.args, `"`, `\"`))
			if strings.Contains(tc.args, `"`) {
				data = fmt.Sprintf("# irqbalance\nIRQBALANCE_ARGS=%s # comment\n", tc.args)
			}
			e, err := ParseEnv("/etc/default/irqbalance", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(e.IRQs, tc.irqs) || !maps.Equal(e.Modules, tc.mods) {
				t.Errorf("IRQs %v, modules %v; want %v, %v", e.IRQs, e.Modules, tc.irqs, tc.mods)
			}
			if !slices.Equal(e.Ignored, tc.ignored) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(e.Ignored, "\n"), strings.Join(tc.ignored, "\n"))
			}
		})
	}
}

// TestEnvVariables: IRQBALANCE_BANNED_INTERRUPTS bans IRQs; the
// oneshot and debug variables are warned about when set at all, as
// irqbalance only asks whether they are.
func TestEnvVariables(t *testing.T) {
	e, err := ParseEnv("irqbalance", []byte("IRQBALANCE_BANNED_INTERRUPTS=\"9 25\"\nIRQBALANCE_ONESHOT=\nIRQBALANCE_ARGS=\"--banirq=25 -i 26\"\n#IRQBALANCE_DEBUG=1\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{9: VarInterrupts, 25: VarInterrupts, 26: "--banirq"}
	if !maps.Equal(e.IRQs, want) {
		t.Errorf("IRQs %v, want %v", e.IRQs, want)
	}
	wantIgnored := []string{"irqbalance:2: IRQBALANCE_ONESHOT: numairqd places IRQs at start and at every change; `numairqd run --oneshot` places them once"}
	if !slices.Equal(e.Ignored, wantIgnored) {
		t.Errorf("warnings %q, want %q", e.Ignored, wantIgnored)
	}
}

// TestArgsErrors: what would keep irqbalance from starting is an error
// naming the file, line and value, bounded in length.
func TestArgsErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"not a number", "IRQBALANCE_ARGS=\"--banirq=x25\"", `irqbalance:1: IRQBALANCE_ARGS: --banirq "x25": not an IRQ number (want a number such as 25): invalid syntax`},
		{"negative", "IRQBALANCE_ARGS=\"-i -3\"", `irqbalance:1: IRQBALANCE_ARGS: --banirq "-3": not an IRQ number`},
		{"no value", "\nIRQBALANCE_ARGS=\"--debug --banirq\"", `irqbalance:2: IRQBALANCE_ARGS: --banirq needs a value (irqbalance would not start)`},
		{"no module", "IRQBALANCE_ARGS=\"--banmod=\"", `irqbalance:1: IRQBALANCE_ARGS: --banmod="": no module name`},
		{"unterminated inner quote", `IRQBALANCE_ARGS="--policyscript='/a b"`, `irqbalance:1: IRQBALANCE_ARGS: unterminated quote in "--policyscript='/a b"`},
		{"unterminated", "IRQBALANCE_ARGS=\"--banirq=3\n", `irqbalance:1: IRQBALANCE_ARGS: unterminated quote`},
		{"bad interrupt", "IRQBALANCE_BANNED_INTERRUPTS=\"9 x\"", `irqbalance:1: IRQBALANCE_BANNED_INTERRUPTS: IRQBALANCE_BANNED_INTERRUPTS "x": not an IRQ number`},
		{"huge number", "IRQBALANCE_ARGS=--banirq=" + strings.Repeat("9", 3000), `(3000 bytes)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseEnv("irqbalance", []byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
		})
	}
}

// TestIgnoredBounded: many unknown words give a bounded list of warnings.
func TestIgnoredBounded(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "--x%d ", i)
	}
	e, err := ParseEnv("f", []byte("IRQBALANCE_ARGS=\""+b.String()+"\""))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Ignored) != maxIgnored+1 || e.Ignored[maxIgnored] != "f:1: IRQBALANCE_ARGS: 4984 more settings numairqd does not follow" {
		t.Errorf("%d warnings, the last %q", len(e.Ignored), e.Ignored[len(e.Ignored)-1])
	}
}
