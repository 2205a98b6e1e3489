package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/numairqd/numairqd/pkg/metrics"
)

// version is the release, set with -ldflags "-X main.version=0.1.0-1"
// (scripts/deb.sh); else the build info's module version is shown.
var version string

func runVersion(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("version", flag.ContinueOnError)
	if code, done := parseArgs(fl, args, stdout, stderr, nil); done {
		return code
	}
	fmt.Fprintln(stdout, versionLine(thisBuild()))
	return 0
}

// build is what the binary knows of itself, for --version, the start
// line and numairqd_build_info.
type build struct {
	metrics.Build
	Time     string // the commit's, "" when not stamped
	Modified bool   // the checkout had uncommitted changes
}

// thisBuild is this binary's build, from version and the Go build info.
func thisBuild() build {
	bi, _ := debug.ReadBuildInfo()
	return readBuild(version, bi)
}

// readBuild combines v (main.version) with bi (nil when none): v, else
// the module version, else "(devel)"; the VCS stamp, if any.
func readBuild(v string, bi *debug.BuildInfo) build {
	b := build{Build: metrics.Build{Version: v, GoVersion: runtime.Version()}}
	if bi != nil {
		if b.Version == "" {
			b.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			b.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			case "-tags":
				b.Tags = s.Value
			}
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	return b
}

// versionLine is "numairqd VERSION (commit REV[, modified], TIME) GOVERSION
// GOOS/GOARCH".
func versionLine(b build) string {
	commit := "commit unknown"
	if b.Revision != "" {
		commit = "commit " + b.Revision
		if b.Modified {
			commit += ", modified"
		}
		if b.Time != "" {
			commit += ", " + b.Time
		}
	}
	return fmt.Sprintf("numairqd %s (%s) %s %s/%s", b.Version, commit, b.GoVersion, runtime.GOOS, runtime.GOARCH)
}
