package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/numairqd/numairqd/pkg/api"
	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/policy"
)

// statusNow is the clock of `numairqd status`; tests fix it.
var statusNow = time.Now

// minInterval bounds how often status reads /plan (megabytes on a large
// machine) and /proc/interrupts.
const minInterval = 100 * time.Millisecond

// runStatus shows the running daemon's /status and /plan, and per-CPU
// interrupt rates it measures itself from /proc (see api.Status).
func runStatus(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("status", flag.ContinueOnError)
	cfgPath := fl.String("config", "", "config file whose listen to read (default "+config.DefaultPath+" if it exists)")
	listen := fl.String("listen", "", "the daemon's HTTP address (default: the config's listen)")
	procfs := fl.String("procfs", "/proc", "procfs root to read /proc/interrupts and /proc/stat from (read only)")
	format := fl.String("format", "text", "output format: text or json")
	watch := fl.Bool("watch", false, "refresh every --interval until interrupted (redrawn in place on a terminal)")
	interval := fl.Duration("interval", 2*time.Second, "time between refreshes, and over which rates are measured; at least 100ms")
	capturePath := fl.String("capture", "", "the `file` of \"numairqd capture\" a dry-run daemon replays: its /proc and config instead of --procfs and the default config (its rates are all zero)")
	if code, done := parseArgs(fl, args, stdout, stderr, format); done {
		return code
	}
	if *interval < minInterval {
		fmt.Fprintf(stderr, "numairqd status: --interval %s: want at least %s\n", *interval, minInterval)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	src, code := openSource(fl, *capturePath, "", *procfs, "", stderr)
	if src == nil {
		return code
	}
	defer src.Close()
	addr, err := statusAddr(*listen, func() (*config.Config, error) { return src.loadConfig(*cfgPath) })
	if err != nil {
		return fail(stderr, "status", err)
	}
	v := &viewer{client: &http.Client{Timeout: 5 * time.Second}, addr: addr, procfs: src.roots.Proc, bootID: api.ReadBootID(src.roots.Proc)}
	return showStatus(ctx, v, *format, *watch, *interval, stdout, stderr)
}

// showStatus shows v once, measuring rates over interval, or with watch
// every interval until ctx ends (Ctrl-C), which is no error then; once,
// Ctrl-C before anything was shown exits 130, as a shell reports SIGINT.
func showStatus(ctx context.Context, v *viewer, format string, watch bool, interval time.Duration, stdout, stderr io.Writer) int {
	term, rows := terminal(stdout)
	if !watch {
		// Fail now, not after interval, when no daemon answers.
		var st api.Status
		if err := v.get("/status", &st); err != nil {
			return fail(stderr, "status", err)
		}
		// Rates need two samples: one now, one after interval.
		if v.elsewhere(&st) == "" {
			v.sample()
			if !apply.Sleep(ctx, interval) {
				return 130
			}
		}
		f, err := v.frame()
		if err != nil {
			return fail(stderr, "status", err)
		}
		return emit(stdout, stderr, format, f, false, 0)
	}
	for first := true; ; first = false {
		f, err := v.frame()
		switch {
		case err != nil && first:
			return fail(stderr, "status", err)
		case err != nil:
			// The daemon may be restarting: say so, keep trying.
			f = &frame{Address: v.addr, Sampled: statusNow().UTC(), Error: err.Error()}
		}
		if format == "text" && term {
			fmt.Fprint(stdout, "\x1b[H\x1b[2J") // home, clear screen
		}
		if code := emit(stdout, stderr, format, f, true, rows); code != 0 {
			return code
		}
		if !apply.Sleep(ctx, interval) {
			if format == "text" && rows > 0 {
				fmt.Fprintln(stdout) // the shell's prompt below the frame, not on its last line
			}
			return 0
		}
	}
}

// statusAddr is --listen, else the listen of the daemon's config.
func statusAddr(listen string, loadConfig func() (*config.Config, error)) (string, error) {
	if listen != "" {
		return listen, config.CheckListen(listen)
	}
	cfg, err := loadConfig()
	if err != nil {
		return "", err
	}
	if cfg.Listen == "" {
		return "", fmt.Errorf("%s sets listen: \"\": the daemon serves no HTTP; pass --listen", cfg.Source)
	}
	return cfg.Listen, nil
}

// emit prints f as text, cut to a terminal's rows when rows > 0 (no
// newline after the last, so that the screen does not scroll), else
// frames a blank line apart with --watch; or as JSON, indented, or one
// line per refresh with --watch so that a reader can decode the stream.
func emit(stdout, stderr io.Writer, format string, f *frame, watch bool, rows int) int {
	if format == "json" {
		enc := json.NewEncoder(stdout)
		if !watch {
			enc.SetIndent("", "  ")
		}
		if err := enc.Encode(f); err != nil {
			return fail(stderr, "status", err)
		}
		return 0
	}
	var b strings.Builder
	writeStatusText(&b, f)
	text := b.String()
	switch {
	case rows > 0:
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		if len(lines) > rows {
			// The notice takes a row: at least two lines are left out.
			lines = append(lines[:rows-1], fmt.Sprintf("... %d more lines (a taller terminal, or --format json)", len(lines)-rows+1))
		}
		text = strings.Join(lines, "\n")
	case watch:
		text += "\n"
	}
	if _, err := io.WriteString(stdout, text); err != nil {
		return fail(stderr, "status", err)
	}
	return 0
}

// viewer fetches the daemon's documents and samples /proc.
type viewer struct {
	client *http.Client
	addr   string
	procfs string
	bootID string // procfs's, "" unknown
	last   *procSample
}

// frame is one refresh: what `status --format json` prints.
type frame struct {
	Address string    `json:"address"`
	Sampled time.Time `json:"sampled"`
	// Error is why the daemon could not be read (--watch goes on
	// trying); the rest is then empty.
	Error string `json:"error,omitempty"`
	// Mismatch says that /status and /plan are of different rounds.
	Mismatch string      `json:"mismatch,omitempty"`
	Status   *api.Status `json:"status,omitempty"`
	Plan     *policy.Doc `json:"plan,omitempty"`
	Rates    *rates      `json:"rates,omitempty"`
}

// frame fetches /status and /plan of one round, retrying when a round
// ends between the reads, and the rates since the last sample.
func (v *viewer) frame() (*frame, error) {
	f := &frame{Address: v.addr}
	for range 3 {
		var st api.Status
		plan := policy.Doc{Plan: &policy.Plan{}} // a /plan without keys leaves it empty, not nil
		if err := v.get("/status", &st); err != nil {
			return nil, err
		}
		if err := v.get("/plan", &plan); err != nil {
			return nil, err
		}
		f.Status, f.Plan = &st, &plan
		f.Mismatch = ""
		if plan.Generation == st.Generation {
			break
		}
		f.Mismatch = fmt.Sprintf("/status is of round %d and /plan of round %d: rounds kept finishing between the reads",
			st.Generation, plan.Generation)
	}
	f.Sampled = statusNow().UTC()
	if why := v.elsewhere(f.Status); why != "" {
		f.Rates = &rates{Error: why}
	} else {
		f.Rates = v.sample()
	}
	return f, nil
}

// elsewhere says why --procfs cannot give the rates of st's daemon:
// its boot_id is not --procfs's, so its machine is another one. "" when
// they match or either is unknown.
func (v *viewer) elsewhere(st *api.Status) string {
	if st.BootID == "" || v.bootID == "" || st.BootID == v.bootID {
		return ""
	}
	return fmt.Sprintf("none: the daemon at %s runs on another machine (its boot_id is not %s's), whose interrupts %s does not count",
		v.addr, v.procfs, v.procfs)
}

// sample reads /proc and returns the rates since the previous sample.
func (v *viewer) sample() *rates {
	s, err := readProcSample(v.procfs, statusNow())
	if err != nil {
		return &rates{Error: err.Error()}
	}
	prev := v.last
	v.last = s
	if prev == nil {
		return &rates{Error: "first sample: rates show from the next refresh"}
	}
	return s.since(prev)
}

// get decodes the JSON at path of the daemon into doc.
func (v *viewer) get(path string, doc any) error {
	url := "http://" + v.addr + path
	resp, err := v.client.Get(url)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) || errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("no numairqd answers at %s (is \"numairqd run\" running with listen %s?): %v", v.addr, v.addr, err)
		}
		return fmt.Errorf("cannot reach numairqd at %s: %v", v.addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStatusBody+1))
	switch {
	case err != nil:
		return fmt.Errorf("%s: %v", url, err)
	case len(body) > maxStatusBody:
		return fmt.Errorf("%s: answer larger than %d MiB", url, maxStatusBody>>20)
	case resp.StatusCode == http.StatusServiceUnavailable:
		// Before the first round, or too busy: the daemon says which.
		return fmt.Errorf("numairqd at %s cannot answer %s now: %s", v.addr, path, strings.TrimSpace(string(body)))
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%s: %s (an older numairqd without %s?)", url, resp.Status, path)
	}
	if err := json.Unmarshal(body, doc); err != nil {
		return fmt.Errorf("%s: %v", url, err)
	}
	return nil
}

// maxStatusBody bounds an answer (/plan: 3.5 MiB for 8,192 IRQs).
const maxStatusBody = 64 << 20
