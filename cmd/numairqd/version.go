package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is the release, set by the package build with
//
//	go build -ldflags "-X main.version=0.1.0-1" ./cmd/numairqd
//
// (scripts/deb.sh). Empty, the module version from the build info is
// shown instead: a pseudo-version (v0.0.0-DATE-COMMIT, +dirty when
// modified) for a build in a checkout, vX.Y.Z for go install ...@vX.Y.Z,
// "(devel)" when neither is known.
var version string

// isVersionFlag tells the version flags from the daemon's own, which
// "numairqd [flags]" runs.
func isVersionFlag(arg string) bool { return arg == "--version" || arg == "-version" }

// runVersion prints the one line of "numairqd --version" or
// "numairqd version".
func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "numairqd version: unexpected argument %q\n", args[0])
		return 2
	}
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprintln(stdout, versionLine(version, bi))
	return 0
}

// versionLine is "numairqd VERSION (commit REV[, modified], TIME) GOVERSION
// GOOS/GOARCH": the version from -ldflags -X, else the build info's;
// the commit and its time from the build info's VCS stamp (absent for
// a build outside a checkout, e.g. go test, or with -buildvcs=false).
func versionLine(v string, bi *debug.BuildInfo) string {
	goVersion := runtime.Version()
	var rev, at string
	modified := false
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
				modified = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "numairqd %s", v)
	if rev == "" {
		b.WriteString(" (commit unknown)")
	} else {
		fmt.Fprintf(&b, " (commit %s", rev)
		if modified {
			b.WriteString(", modified")
		}
		if at != "" {
			fmt.Fprintf(&b, ", %s", at)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " %s %s/%s", goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}
