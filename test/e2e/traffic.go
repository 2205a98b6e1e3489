//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Traffic is one run of test/trafficgen that the guest asked for with
// `traffic NIC FLOWS RATE SECONDS [WEIGHTS]` (guest/lib.sh): the host
// starts it inside the boot's namespace, on the tap of that NIC, at
// the guest's MAC, when the request appears on the console.
type Traffic struct {
	Request string `json:"request"` // the guest's request, "nic=0 flows=64 ..."
	// Summary is trafficgen's closing JSON line (frames_sent,
	// send_errors, elapsed_s, offered_fps, ...).
	Summary map[string]any `json:"summary"`
	Err     string         `json:"error,omitempty"`
}

// FramesSent is Summary's frames_sent, 0 when there is none.
func (tr Traffic) FramesSent() float64 {
	v, _ := tr.Summary["frames_sent"].(float64)
	return v
}

// trafficSource starts and collects the generator runs of one boot.
type trafficSource struct {
	ctx   context.Context
	net   *labNet
	guest Guest
	bin   string // the trafficgen binary
	name  string // the scenario, as the request names it
	wg    sync.WaitGroup
	mu    sync.Mutex
	runs  []Traffic
}

// request handles one console line: an E2E-TRAFFIC request starts a
// generator; any other line is ignored. A malformed request is recorded
// as a failed run, which fails the test.
func (s *trafficSource) request(line string) {
	_, rest, ok := strings.Cut(strings.TrimRight(line, "\r"), "E2E-TRAFFIC ")
	f := strings.Fields(rest)
	if !ok || len(f) == 0 || f[0] != s.name {
		return
	}
	kv := map[string]string{}
	for _, p := range f[1:] {
		k, v, _ := strings.Cut(p, "=")
		kv[k] = v
	}
	tr := Traffic{Request: strings.Join(f[1:], " ")}
	slot := s.reserve()
	nic, err := strconv.Atoi(kv["nic"])
	if err != nil || nic < 0 || nic >= len(s.net.taps) {
		tr.Err = fmt.Sprintf("bad nic %q for %d NICs", kv["nic"], len(s.net.taps))
		s.set(slot, tr)
		return
	}
	// trafficgen validates and bounds every value itself.
	args := []string{"-iface", s.net.taps[nic], "-dst-mac", s.guest.NetMAC(nic),
		"-flows", kv["flows"], "-rate", kv["rate"], "-duration", kv["seconds"] + "s"}
	if w := kv["weights"]; w != "" {
		args = append(args, "-weights", w)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		cmd := s.net.command(s.ctx, s.bin, args...)
		// At the end of the boot: SIGTERM, which trafficgen answers with
		// its summary; SIGKILL only if it does not stop.
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = 5 * time.Second
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if line := bytes.TrimSpace(out.Bytes()); len(line) > 0 {
			if jerr := json.Unmarshal(line, &tr.Summary); jerr != nil {
				tr.Err = fmt.Sprintf("summary %.200q: %v", line, jerr)
			}
		}
		if err != nil && s.ctx.Err() == nil {
			tr.Err = strings.TrimSpace(fmt.Sprintf("%s %v: %v: %s", s.bin, args, err, errb.String()))
		}
		s.set(slot, tr)
	}()
}

// reserve is the index of the next run, in the order of the requests.
func (s *trafficSource) reserve() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs = append(s.runs, Traffic{})
	return len(s.runs) - 1
}

func (s *trafficSource) set(i int, tr Traffic) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[i] = tr
}

// wait returns every run, in the order of the requests, once they have
// all ended.
func (s *trafficSource) wait() []Traffic {
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs
}
