package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// sampleUsage documents the sample subcommand.
const sampleUsage = `guestcheck sample [-interval D] [-count N] [-irqs REGEXP] [-iface NAME]
  Prints N samples, one every -interval (default 1s, at least 10ms: one
  USER_HZ tick), each one line of JSON (guestinfo.LoadSample): uptime,
  the /proc/interrupts counts of the IRQs whose action matches -irqs
  (default virtio and NVMe queue IRQs) with the CPU id of each column
  and each IRQ's affinity lists, every online CPU's /proc/stat ticks
  and NET_RX count, and -iface's rx statistics (default eth0; "" for
  none). What could not be read is in the sample's "errors"; the exit
  status is not 0 only for a bad flag or a failed write.`

// Bounds of sample's flags: /proc/stat counts in 10 ms ticks, and a
// run stays within the length of a scenario.
const (
	minSampleInterval = 10 * time.Millisecond
	maxSampleInterval = time.Hour
	maxSampleCount    = 100000
)

func sample(fs guestinfo.FS, args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("sample", flag.ContinueOnError)
	fl.SetOutput(os.Stderr)
	fl.Usage = func() { fmt.Fprintln(os.Stderr, sampleUsage) }
	interval := fl.Duration("interval", time.Second, "time between samples")
	count := fl.Int("count", 2, "number of samples")
	irqs := fl.String("irqs", guestinfo.QueueIRQPattern, "regexp on IRQ action names")
	iface := fl.String("iface", "eth0", `network interface whose rx statistics to sample ("" for none)`)
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return badUsage(sampleUsage, "sample: unexpected argument %q", fl.Arg(0))
	}
	if *interval < minSampleInterval || *interval > maxSampleInterval {
		return fmt.Errorf("-interval %v: want %v..%v", *interval, minSampleInterval, maxSampleInterval)
	}
	if *count < 1 || *count > maxSampleCount {
		return fmt.Errorf("-count %d: want 1..%d", *count, maxSampleCount)
	}
	re, err := regexp.Compile(*irqs)
	if err != nil {
		return fmt.Errorf("-irqs: %w", err)
	}
	// Samples are due at start + i*interval, so the time spent reading
	// does not add up over a long run.
	start := time.Now()
	for i := range *count {
		time.Sleep(time.Until(start.Add(time.Duration(i) * *interval)))
		b, err := json.Marshal(fs.ReadLoad(re.MatchString, *iface))
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
			return err
		}
	}
	return nil
}
