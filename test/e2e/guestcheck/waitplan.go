package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// waitPlanUsage documents the wait-plan subcommand.
const waitPlanUsage = `guestcheck wait-plan -url URL -pci ADDR [-pci ADDR ...] [flags]
  Reads the generation of the daemon's plan at URL (/plan; 0 while it
  answers no plan), or takes -after, does the -write and -exec actions
  in order, then polls URL and the devices' IRQs until the daemon's plan
  is in place on every -pci device: a plan of a newer generation lists
  each of the device's IRQs with its action name (with -pairs N, at
  least *-input.K and *-output.K for K < N), and every IRQ it plans
  (planned not empty, not managed) has that smp_affinity_list; with
  -gone, it lists no IRQ of that device. The same IRQs on the same
  lists must then hold for -hold; a change starts the wait afresh (later
  rounds may change the plan), until -timeout. Prints one line:
    OK ms=M polls=N generation=G hold_ms=H irqs=ADDR/IRQ:LIST,...
    TIMEOUT ms=M polls=N generation=G last: WHAT DIFFERED
    ERROR ms=M ...                                   an action failed
  and exits 0 only for OK. It waits for whatever the daemon planned,
  not for a given placement (wait-placement does that): a scenario
  checks the placement afterwards, from a guestcheck state.`

// planView is the part of /plan wait-plan reads: keys the plan's
// documentation (policy.Doc) says scripts may rely on.
type planView struct {
	Generation uint64 `json:"generation"`
	Devices    []struct {
		PCI  string `json:"pci"`
		IRQs []struct {
			IRQ     int    `json:"irq"`
			Name    string `json:"name"`
			Managed bool   `json:"managed"`
			Planned string `json:"planned"`
		} `json:"irqs"`
	} `json:"devices"`
}

// fetchPlan GETs rawURL (http://HOST:PORT/PATH) and decodes the plan;
// a status other than 200 (a 503 before the first round) is an error.
// It speaks HTTP/1.0 over a plain connection, whose response ends where
// the connection does: net/http would double the agent's size in every
// guest's initramfs for one loopback GET.
func fetchPlan(rawURL string, timeout time.Duration) (planView, error) {
	var p planView
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return p, fmt.Errorf("-url %q: want http://HOST:PORT/PATH", rawURL)
	}
	conn, err := net.DialTimeout("tcp", u.Host, timeout)
	if err != nil {
		return p, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return p, err
	}
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.0\r\nHost: %s\r\nAccept: application/json\r\n\r\n", u.RequestURI(), u.Host); err != nil {
		return p, err
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		return p, fmt.Errorf("GET %s: %w", rawURL, err)
	}
	head, body, ok := strings.Cut(string(b), "\r\n\r\n")
	status, _, _ := strings.Cut(head, "\r\n")
	if f := strings.Fields(status); !ok || len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") || f[1] != "200" {
		return p, fmt.Errorf("GET %s: %q: %.100s", rawURL, status, strings.TrimSpace(body))
	}
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		return p, fmt.Errorf("GET %s: %w", rawURL, err)
	}
	return p, nil
}

// planSpec is what wait-plan waits for.
type planSpec struct {
	pcis  []string
	gone  []string
	pairs int
	after uint64
}

// inPlace returns "" when plan is in place on the devices whose IRQs
// are irqs (by PCI address), else what differs; summary lists the
// device IRQs compared, for the hold.
func (s planSpec) inPlace(plan planView, irqs map[string][]deviceIRQ) (diff, summary string) {
	if plan.Generation <= s.after {
		return fmt.Sprintf("plan generation %d, waiting for one after %d", plan.Generation, s.after), ""
	}
	var diffs, sum []string
	for _, pci := range s.pcis {
		planned := map[int]string{} // IRQ -> planned list
		names := map[int]string{}
		for _, d := range plan.Devices {
			if d.PCI != pci {
				continue
			}
			for _, q := range d.IRQs {
				names[q.IRQ] = q.Name
				if !q.Managed && q.Planned != "" {
					planned[q.IRQ] = q.Planned
				}
			}
		}
		guest := irqs[pci]
		if len(guest) == 0 {
			diffs = append(diffs, pci+": no IRQs in the guest")
			continue
		}
		seen := map[string]bool{}
		for _, q := range guest {
			sum = append(sum, fmt.Sprintf("%s/%d:%s", pci, q.irq, q.list))
			if q.queue >= 0 {
				kind := "in"
				if strings.Contains(q.name, "-output.") {
					kind = "out"
				}
				seen[kind+strconv.Itoa(q.queue)] = true
			}
			name, ok := names[q.irq]
			switch {
			case !ok:
				diffs = append(diffs, fmt.Sprintf("%s irq %d %s: not in the plan", pci, q.irq, q.name))
			case name != q.name:
				diffs = append(diffs, fmt.Sprintf("%s irq %d: %s in the plan, %s in the guest", pci, q.irq, name, q.name))
			case planned[q.irq] != "" && planned[q.irq] != q.list:
				diffs = append(diffs, fmt.Sprintf("%s irq %d %s on %s, planned %s", pci, q.irq, q.name, q.list, planned[q.irq]))
			}
		}
		for k := range s.pairs {
			for _, kind := range []string{"in", "out"} {
				if !seen[kind+strconv.Itoa(k)] {
					diffs = append(diffs, fmt.Sprintf("%s: no %sput.%d IRQ", pci, kind, k))
				}
			}
		}
		for n := range planned {
			if !slices.ContainsFunc(guest, func(q deviceIRQ) bool { return q.irq == n }) {
				diffs = append(diffs, fmt.Sprintf("%s irq %d %s: planned, not in the guest", pci, n, names[n]))
			}
		}
	}
	for _, pci := range s.gone {
		for _, d := range plan.Devices {
			if d.PCI == pci && len(d.IRQs) > 0 {
				diffs = append(diffs, fmt.Sprintf("%s: %d IRQs still in the plan", pci, len(d.IRQs)))
			}
		}
	}
	slices.Sort(diffs)
	return strings.Join(diffs, "; "), strings.Join(sum, ",")
}

// waitPlan is `guestcheck wait-plan` (waitPlanUsage) on the proc and
// sys trees under root.
func waitPlan(root string, args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("wait-plan", flag.ContinueOnError)
	fl.SetOutput(os.Stderr)
	fl.Usage = func() { fmt.Fprintln(os.Stderr, waitPlanUsage) }
	var spec planSpec
	var pcis, gone, writes, execs listFlag
	urlFlag := fl.String("url", "", "the daemon's /plan URL")
	fl.Var(&pcis, "pci", "PCI address of a device whose IRQs must be placed as planned (repeatable)")
	fl.Var(&gone, "gone", "PCI address of a device the plan must list no IRQ of (repeatable)")
	fl.IntVar(&spec.pairs, "pairs", 0, "queue pairs each -pci device must have")
	after := fl.Int64("after", -1, "wait for a plan generation after this one (default: the one before the actions)")
	fl.Var(&writes, "write", "PATH=VALUE to write after the generation is read (repeatable, in order)")
	fl.Var(&execs, "exec", "shell command to run after the writes, which must exit 0 (repeatable, in order)")
	timeout := fl.Duration("timeout", 10*time.Second, "give up after this long")
	hold := fl.Duration("hold", 0, "the placement must then stay unchanged this long")
	poll := fl.Duration("poll", 50*time.Millisecond, "poll interval")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *urlFlag == "" || len(pcis) == 0 {
		return badUsage(waitPlanUsage, "wait-plan: -url and -pci are required")
	}
	if fl.NArg() > 0 {
		return badUsage(waitPlanUsage, "wait-plan: unexpected argument %q", fl.Arg(0))
	}
	if u, err := url.Parse(*urlFlag); err != nil || u.Scheme != "http" || u.Host == "" {
		return badUsage(waitPlanUsage, "wait-plan: -url %q: want http://HOST:PORT/PATH", *urlFlag)
	}
	spec.pcis, spec.gone = pcis, gone
	start := time.Now()
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
	}
	if *after >= 0 {
		spec.after = uint64(*after)
	} else if p, err := fetchPlan(*urlFlag, 2*time.Second); err == nil {
		spec.after = p.Generation
	}
	for _, w := range writes {
		p, v, ok := strings.Cut(w, "=")
		if !ok {
			return fmt.Errorf("-write %q: want PATH=VALUE", w)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0); err != nil {
			fmt.Fprintf(stdout, "ERROR ms=%s write %s=%s: %v\n", ms(time.Since(start)), p, v, err)
			return errReported
		}
	}
	for _, c := range execs {
		if out, err := exec.Command("/bin/sh", "-c", c).CombinedOutput(); err != nil {
			fmt.Fprintf(stdout, "ERROR ms=%s exec %q: %v: %s\n", ms(time.Since(start)), c, err, strings.Join(strings.Fields(string(out)), " "))
			return errReported
		}
	}

	var (
		polls   int
		gen     uint64
		matched time.Duration = -1
		placed  string
		last    string
	)
	for {
		polls++
		plan, err := fetchPlan(*urlFlag, 2*time.Second)
		irqs := map[string][]deviceIRQ{}
		for _, pci := range spec.pcis {
			if err == nil {
				irqs[pci], err = readDeviceIRQs(root, pci)
			}
		}
		now := time.Since(start)
		var sum string
		if err != nil {
			last = err.Error()
		} else {
			gen = plan.Generation
			last, sum = spec.inPlace(plan, irqs)
		}
		switch {
		case last != "":
			matched = -1
		case matched < 0 || sum != placed:
			matched, placed = now, sum
		}
		if matched >= 0 && now-matched >= *hold {
			fmt.Fprintf(stdout, "OK ms=%s polls=%d generation=%d hold_ms=%s irqs=%s\n", ms(matched), polls, gen, ms(now-matched), placed)
			return nil
		}
		if now >= *timeout {
			if last == "" {
				last = fmt.Sprintf("in place since ms=%s, not yet for -hold %v", ms(matched), *hold)
			}
			fmt.Fprintf(stdout, "TIMEOUT ms=%s polls=%d generation=%d last: %s\n", ms(now), polls, gen, last)
			return errReported
		}
		time.Sleep(*poll)
	}
}
