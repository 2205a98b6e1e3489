//go:build e2e

package e2e

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// Check is one E2E-RESULT line.
type Check struct {
	Name   string
	Status string // PASS or FAIL: a check that cannot run has failed
	Detail string
}

// Metric is one E2E-METRIC line, or a figure the host measured.
type Metric struct {
	Name  string
	Value string
}

// Data is the output of one `data NAME CMD...` call in the guest.
type Data struct {
	RC     int
	Output []byte
}

// markers is what the guest reported for one scenario.
type markers struct {
	Begun, Ended bool
	RC           int // exit status of scenario.sh, from E2E-END
	Checks       []Check
	Metrics      []Metric
	Data         map[string]Data
	Malformed    []string
}

// parseMarkers reads the E2E-* lines of a serial log and ignores the
// rest. Lines may end in \r (the console's ONLCR).
func parseMarkers(log string, scenario string) markers {
	m := markers{Data: map[string]Data{}, RC: -1}
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<16), 64<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		i := strings.Index(line, "E2E-")
		if i < 0 {
			continue
		}
		f := strings.Fields(line[i:])
		bad := func() { m.Malformed = append(m.Malformed, line) }
		switch f[0] {
		case "E2E-BEGIN":
			m.Begun = len(f) == 2 && f[1] == scenario
		case "E2E-END":
			if len(f) != 3 || f[1] != scenario {
				bad()
				continue
			}
			m.Ended = true
			m.RC, _ = strconv.Atoi(f[2])
		case "E2E-RESULT":
			if len(f) < 4 || f[1] != scenario {
				bad()
				continue
			}
			switch f[3] {
			case "PASS", "FAIL":
			default:
				bad()
				continue
			}
			m.Checks = append(m.Checks, Check{Name: f[2], Status: f[3], Detail: strings.Join(f[4:], " ")})
		case "E2E-METRIC":
			if len(f) != 3 {
				bad()
				continue
			}
			m.Metrics = append(m.Metrics, Metric{Name: f[1], Value: f[2]})
		case "E2E-DATA":
			if len(f) < 3 || len(f) > 4 {
				bad()
				continue
			}
			rc, err := strconv.Atoi(f[2])
			var out []byte
			if err == nil && len(f) == 4 {
				out, err = base64.StdEncoding.DecodeString(f[3])
			}
			if err != nil {
				m.Malformed = append(m.Malformed, fmt.Sprintf("%.200s: %v", line, err))
				continue
			}
			m.Data[f[1]] = Data{RC: rc, Output: out}
		}
	}
	return m
}
