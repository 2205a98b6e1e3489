// Command guestcheck is the e2e harness's guest agent: a static binary
// put into the initramfs that reports the guest's IRQ and NUMA state to
// the scenario script.
//
//	guestcheck state                  one line of JSON (guestinfo.State)
//	guestcheck irqs REGEXP            IRQ numbers with an action matching REGEXP, one a line
//	guestcheck write-affinity IRQ LIST
//	                                  write LIST to /proc/IRQ/smp_affinity_list; print
//	                                  "OK" or the errno name ("EIO errno=5 ..."), exit 1 on error
//	guestcheck wait-placement -pci ADDR -queues "CPU..." [-control LIST] [-write PATH=VALUE]
//	                                  [-signal PID] [-since UPTIME] [-timeout D] [-hold D]
//	                                  do the actions, then wait until the device's queue
//	                                  IRQs are on the given CPUs and stay; print the latency (see wait.go)
//	guestcheck wait-plan -url URL -pci ADDR... [-pairs N] [-gone ADDR] [-write PATH=VALUE] [-exec CMD]
//	                                  [-after GEN] [-timeout D] [-hold D]
//	                                  do the actions, then wait until the daemon's newer /plan is
//	                                  in place on the devices and stays (see waitplan.go)
//	guestcheck sample [-interval D] [-count N] [-irqs REGEXP] [-iface NAME]
//	                                  one JSON line (guestinfo.LoadSample) per sample (see sample.go)
//	guestcheck send -cpus LIST -dst IP [-rate PPS] [-duration D] ...
//	                                  pinned UDP senders; one JSON line (guestinfo.TxRun) (see send.go)
//	guestcheck xps -pci ADDR          the NIC's XPS against its completion IRQs (guestinfo.XPSReport):
//	                                  one line, exit 0 only when every tx queue is aligned and
//	                                  every online CPU is in some queue's xps_cpus
//	guestcheck queue-packets -iface NAME
//	                                  the interface's per-queue rx packets as ethtool -S
//	                                  printed them on 6.1, from qstats-get or ethtool (see queues.go)
//	guestcheck netdev                 the netdev family's queues, NAPIs and qstats, one JSON line
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"

	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// errReported is returned when the failure was already printed on stdout.
var errReported = errors.New("reported")

// usageError is a command line guestcheck cannot run: main prints what
// was wrong, then the usage text, on stderr.
type usageError struct {
	msg   string // what was wrong, one line
	usage string
}

func (e *usageError) Error() string { return e.msg }

func badUsage(usage, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), usage: usage}
}

const usage = "usage: guestcheck state | irqs REGEXP | write-affinity IRQ LIST | wait-placement -pci ADDR -queues CPUS ... | wait-plan -url URL -pci ADDR ... | sample [-interval D] [-count N] ... | send -cpus LIST -dst IP ... | xps -pci ADDR | queue-packets -iface NAME | netdev"

func main() {
	if err := run(os.Args[1:]); err != nil {
		var ue *usageError
		switch {
		case errors.As(err, &ue):
			fmt.Fprintln(os.Stderr, "guestcheck:", ue.msg)
			fmt.Fprintln(os.Stderr, ue.usage)
		case !errors.Is(err, errReported):
			fmt.Fprintln(os.Stderr, "guestcheck:", err)
		}
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return badUsage(usage, "no command")
	}
	fs := guestinfo.FS{Root: "/"}
	switch args[0] {
	case "state":
		b, err := json.Marshal(fs.Read())
		if err != nil {
			return err
		}
		fmt.Printf("%s\n", b)
		return nil
	case "irqs":
		if len(args) != 2 {
			return badUsage(usage, "irqs: want 1 argument, got %d", len(args)-1)
		}
		re, err := regexp.Compile(args[1])
		if err != nil {
			return err
		}
		for _, irq := range fs.Read().IRQsNamed(re.MatchString) {
			fmt.Println(irq.Number)
		}
		return nil
	case "write-affinity":
		if len(args) != 3 {
			return badUsage(usage, "write-affinity: want 2 arguments, got %d", len(args)-1)
		}
		irq, err := strconv.Atoi(args[1])
		if err != nil {
			return fmt.Errorf("irq %q: %w", args[1], err)
		}
		return writeAffinity(fs, irq, args[2])
	case "wait-placement":
		return waitPlacement(fs.Root, args[1:], os.Stdout)
	case "wait-plan":
		return waitPlan(fs.Root, args[1:], os.Stdout)
	case "sample":
		return sample(fs, args[1:], os.Stdout)
	case "send":
		return send(fs, args[1:], os.Stdout)
	case "queue-packets":
		return queuePackets(args[1:], os.Stdout)
	case "netdev":
		return netdevDump(os.Stdout)
	case "xps":
		if len(args) != 3 || args[1] != "-pci" {
			return badUsage(usage, "xps: want -pci ADDR")
		}
		rep := fs.Read().XPS(args[2])
		fmt.Println(rep)
		if !rep.OK() {
			return errReported
		}
		return nil
	}
	return badUsage(usage, "unknown command %q", args[0])
}

// writeAffinity writes list with a single write(2), as a daemon would,
// and reports the errno by name so scenarios can match on it.
func writeAffinity(fs guestinfo.FS, irq int, list string) error {
	path := filepath.Join(fs.Root, "proc/irq", strconv.Itoa(irq), "smp_affinity_list")
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.Write([]byte(list + "\n"))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		fmt.Println("OK")
		return nil
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		fmt.Printf("%s errno=%d %v\n", errnoName(errno), int(errno), err)
	} else {
		fmt.Printf("ERROR %v\n", err)
	}
	return errReported
}

func errnoName(e syscall.Errno) string {
	names := map[syscall.Errno]string{
		syscall.EPERM:  "EPERM",
		syscall.ENOENT: "ENOENT",
		syscall.EIO:    "EIO",
		syscall.EACCES: "EACCES",
		syscall.EBUSY:  "EBUSY",
		syscall.EINVAL: "EINVAL",
		syscall.ENOSPC: "ENOSPC",
		syscall.EROFS:  "EROFS",
	}
	if n, ok := names[e]; ok {
		return n
	}
	return "E" + strconv.Itoa(int(e))
}
