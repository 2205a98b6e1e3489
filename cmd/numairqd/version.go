package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is the release, set by scripts/deb.sh with -ldflags
// "-X main.version=0.1.0-1"; empty, the build info's module version is
// shown instead.
var version string

// isVersionFlag tells the version flags from the daemon's own.
func isVersionFlag(arg string) bool { return arg == "--version" || arg == "-version" }

func runVersion(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("version", flag.ContinueOnError)
	if code, done := parseArgs(fl, args, stdout, stderr, nil); done {
		return code
	}
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprintln(stdout, versionLine(version, bi))
	return 0
}

// versionLine is "numairqd VERSION (commit REV[, modified], TIME) GOVERSION
// GOOS/GOARCH"; the commit is the build info's VCS stamp, absent outside
// a checkout or with -buildvcs=false.
func versionLine(v string, bi *debug.BuildInfo) string {
	goVersion := runtime.Version()
	var rev, at, modified string
	if bi != nil {
		if v == "" {
			v = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = ", modified"
				}
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	commit := "commit unknown"
	if rev != "" {
		commit = "commit " + rev + modified
		if at != "" {
			commit += ", " + at
		}
	}
	return fmt.Sprintf("numairqd %s (%s) %s %s/%s", v, commit, goVersion, runtime.GOOS, runtime.GOARCH)
}
