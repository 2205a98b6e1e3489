// Package hostcorpus builds and checks testdata/hosts, the corpus of
// machine captures the planner is tested on (pkg/policy's TestCorpus):
// its index, testdata/hosts/README.md, and the generators that write
// the captures, from fakesys's fleet shapes and from hwloc's gathers of
// real machines, when their tests run with -update.
package hostcorpus

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Row is one machine of the index.
type Row struct {
	Machine string // the capture's file stem: Machine + ".tar.gz"
	Shape   string // sockets, nodes, CPUs, SMT, LLCs; devices
	Source  string // URL, repository+path+commit, or fakesys host
	Holds   string // which parts are real, which synthesized and how
}

// indexHeader is the header row of an index table.
var indexHeader = []string{"machine", "shape", "source", "what it holds"}

// ReadIndex returns the rows of every table of the index at path whose
// header is indexHeader, in file order; other tables are skipped.
func ReadIndex(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []Row
	in := false // inside an index table
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			in = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case !in:
			in = len(cells) == len(indexHeader) && strings.EqualFold(strings.Join(cells, "|"), strings.Join(indexHeader, "|"))
		case strings.Trim(line, "|-: ") == "":
			// the separator row
		case len(cells) != len(indexHeader):
			return nil, fmt.Errorf("%s:%d: %d cells, want %d (%s)", path, n, len(cells), len(indexHeader), strings.Join(indexHeader, ", "))
		default:
			rows = append(rows, Row{Machine: strings.Trim(cells[0], "`"), Shape: cells[1], Source: cells[2], Holds: cells[3]})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows, nil
}
