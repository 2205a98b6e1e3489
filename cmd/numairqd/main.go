// Command numairqd keeps every multi-queue device's IRQs on the right
// CPUs of a NUMA machine. See README.md for the subcommands.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// procsCfg is how main bounded GOMAXPROCS; tests leave it zero.
var procsCfg procsState

func main() {
	procsCfg = boundProcs()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: numairqd [run] [flags]
       numairqd <command> [flags]

commands:
  run        keep IRQs placed (the daemon; the default when no command is given)
  topology   print the CPU/NUMA topology and each node's spread order
  plan       print where every IRQ would go, changing nothing
  reload     make the running daemon reload its config; returns once it is applied
  version    print the version, commit and Go version (also --version)
  help       print this text

Run "numairqd <command> -h" for the flags of a command.
`

// run dispatches a subcommand and returns the process exit status:
// 0 success, 1 failure, 2 bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" && !isVersionFlag(args[0]) {
		return runDaemon(args, stderr)
	}
	switch args[0] {
	case "run":
		return runDaemon(args[1:], stderr)
	case "topology":
		return runTopology(args[1:], stdout, stderr)
	case "plan":
		return runPlan(args[1:], stdout, stderr)
	case "reload":
		return runReload(args[1:], stdout, stderr)
	case "version", "--version", "-version":
		return runVersion(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "numairqd: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

// parseArgs parses a subcommand's args into fl: false (usage error) on a
// bad flag, an argument, or a format, if any, other than text or json.
func parseArgs(fl *flag.FlagSet, args []string, stderr io.Writer, format *string) bool {
	fl.SetOutput(stderr)
	switch {
	case fl.Parse(args) != nil:
		return false
	case fl.NArg() > 0:
		fmt.Fprintf(stderr, "numairqd %s: unexpected argument %q\n", fl.Name(), fl.Arg(0))
		return false
	case format != nil && *format != "text" && *format != "json":
		fmt.Fprintf(stderr, "numairqd %s: --format %q: want text or json\n", fl.Name(), *format)
		return false
	}
	return true
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
