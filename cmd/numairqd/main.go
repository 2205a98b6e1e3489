// Command numairqd keeps every multi-queue device's IRQs on the right
// CPUs of a NUMA machine. See docs/operations.md for the subcommands.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/numairqd/numairqd/internal/spell"
	"github.com/numairqd/numairqd/pkg/inventory"
)

// procsCfg is how main bounded GOMAXPROCS; tests leave it zero.
var procsCfg procsState

func main() {
	procsCfg = boundProcs()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: numairqd <command> [flags]

commands:
  run        keep IRQs placed (the daemon: it writes /proc/irq, so it is never started without its name)
  topology   print the CPU/NUMA topology and each node's spread order
  plan       print where every IRQ would go, changing nothing
  capture    write what numairqd reads of this machine to one archive, to plan it elsewhere
  status     show the running daemon: each queue's CPUs and why, per-CPU rates, bans, the last round
  reload     make the running daemon reload its config; returns once it is applied
  version    print the version, commit and Go version (also --version)
  help       print this text

Run "numairqd <command> -h" for the flags of a command.
`

// run dispatches a subcommand and returns the process exit status:
// 0 success, 1 failure, 2 bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		fmt.Fprintf(stderr, "numairqd: no command\n\n%s", usage)
		return 2
	case strings.HasPrefix(args[0], "-") && !slices.Contains(ownFlags, args[0]):
		fmt.Fprintf(stderr, "numairqd: %s before any command (the daemon is \"numairqd run %s\")\n\n%s", args[0], strings.Join(args, " "), usage)
		return 2
	}
	switch args[0] {
	case "run":
		return runDaemon(args[1:], stdout, stderr)
	case "topology":
		return runTopology(args[1:], stdout, stderr)
	case "plan":
		return runPlan(args[1:], stdout, stderr)
	case "capture":
		return runCapture(args[1:], stdout, stderr)
	case "status":
		return runStatus(args[1:], stdout, stderr)
	case "reload":
		return runReload(args[1:], stdout, stderr)
	case "version", "--version", "-version":
		return runVersion(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		hint := ""
		if c := spell.Nearest(args[0], commands); c != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", c)
		}
		fmt.Fprintf(stderr, "numairqd: unknown command %q%s\n\n%s", args[0], hint, usage)
		return 2
	}
}

// ownFlags are the flags that may come before any command.
var ownFlags = []string{"-h", "--help", "--version", "-version"}

// commands are the subcommands, for "did you mean".
var commands = []string{"run", "topology", "plan", "capture", "status", "reload", "version", "help"}

// parseArgs parses a subcommand's args into fl. done says the command
// ends now with exit status code: 0 after -h, 2 on a bad flag, an
// argument, or a format (if any) other than text or json.
func parseArgs(fl *flag.FlagSet, args []string, stdout, stderr io.Writer, format *string) (code int, done bool) {
	fl.SetOutput(stderr)
	fl.Usage = func() {} // printed once below, on stdout for -h
	err := fl.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(fl, stdout)
		return 0, true
	case err != nil:
		printUsage(fl, stderr)
		return 2, true
	case fl.NArg() > 0:
		fmt.Fprintf(stderr, "numairqd %s: unexpected argument %q\n", fl.Name(), fl.Arg(0))
		return 2, true
	case format != nil && *format != "text" && *format != "json":
		fmt.Fprintf(stderr, "numairqd %s: --format %q: want text or json\n", fl.Name(), *format)
		return 2, true
	}
	return 0, false
}

// printUsage prints a subcommand's usage line and its flags to w.
func printUsage(fl *flag.FlagSet, w io.Writer) {
	n := 0
	fl.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		fmt.Fprintf(w, "usage: numairqd %s\n", fl.Name())
		return
	}
	fmt.Fprintf(w, "usage: numairqd %s [flags]\n", fl.Name())
	fl.SetOutput(w)
	fl.PrintDefaults()
}

// fail prints a subcommand's error and returns its exit status, 1.
func fail(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "numairqd %s: %v\n", cmd, err)
	return 1
}

// output prints doc as indented JSON for --format json, else calls text.
func output(stdout, stderr io.Writer, cmd, format string, doc any, text func(io.Writer)) int {
	if format == "text" {
		text(stdout)
		return 0
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fail(stderr, cmd, err)
	}
	return 0
}

// GOMAXPROCS, unless the environment sets it: one P, as numairqd is one
// loop (see docs/architecture.md); two for a host with IRQs enough for two of
// inventory's parallel readers.
const (
	procs      = 1
	largeProcs = 2
	largeHost  = 2 * inventory.PerReader
)

// procsState is the most GOMAXPROCS numairqd may set (the runtime's
// default, following a container's CPU limit), 0 when it sets none.
type procsState int

// boundProcs sets GOMAXPROCS to procs unless the environment sets it.
func boundProcs() procsState {
	if os.Getenv("GOMAXPROCS") != "" {
		return 0
	}
	s := procsState(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(min(procs, int(s)))
	return s
}

// fit sets GOMAXPROCS for a host with irqs device IRQs.
func (s procsState) fit(irqs int) {
	if s == 0 {
		return
	}
	n := procs
	if irqs >= largeHost {
		n = largeProcs
	}
	runtime.GOMAXPROCS(min(n, int(s)))
}
