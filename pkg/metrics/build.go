package metrics

import (
	"cmp"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
)

// Build is what numairqd_build_info says of the binary, from the values
// of its --version line, with prometheus/common's labels.
type Build struct {
	Version   string // the release, or the module version; "(devel)" when neither is known
	Revision  string // the VCS commit; "" (shown "unknown") when not stamped
	Branch    string // "" when not known
	GoVersion string // the toolchain that built it
	Tags      string // the build tags; "" (shown "unknown") when none were recorded
}

// version is Version, "(devel)" when unknown.
func (b Build) version() string { return cmp.Or(b.Version, "(devel)") }

// buildInfo is numairqd_build_info: always 1, the facts in its labels.
func buildInfo(b Build) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "build_info",
		Help: "A metric with a constant '1' value labeled by version, revision, branch, goversion from which numairqd was built, and the goos and goarch for the build.",
		ConstLabels: prometheus.Labels{
			"version": b.version(), "revision": cmp.Or(b.Revision, "unknown"), "branch": b.Branch,
			"goversion": cmp.Or(b.GoVersion, runtime.Version()), "goos": runtime.GOOS, "goarch": runtime.GOARCH,
			"tags": cmp.Or(b.Tags, "unknown"),
		},
	})
	g.Set(1)
	return g
}
