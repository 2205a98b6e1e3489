package main

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/numairqd/numairqd/pkg/api"
	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/state"
)

func TestVersionLine(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.27.3",
		Main:      debug.Module{Path: "github.com/numairqd/numairqd", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "21c4ecb0123456789abcdef0123456789abcdef0"},
			{Key: "vcs.time", Value: "2026-12-01T10:11:12Z"},
			{Key: "vcs.modified", Value: "false"},
		},
	}
	dirty := *stamped
	dirty.Settings = append([]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, stamped.Settings[:3]...)
	platform := " " + runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		name, v string
		bi      *debug.BuildInfo
		want    string
	}{
		{"package build", "0.1.0-1", stamped,
			"numairqd 0.1.0-1 (commit 21c4ecb0123456789abcdef0123456789abcdef0, 2026-12-01T10:11:12Z) go1.27.3" + platform},
		{"checkout build", "", stamped,
			"numairqd (devel) (commit 21c4ecb0123456789abcdef0123456789abcdef0, 2026-12-01T10:11:12Z) go1.27.3" + platform},
		{"uncommitted changes", "0.1.0-1", &dirty,
			"numairqd 0.1.0-1 (commit 21c4ecb0123456789abcdef0123456789abcdef0, modified, 2026-12-01T10:11:12Z) go1.27.3" + platform},
		{"go install @version", "", &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "v0.1.0"}},
			"numairqd v0.1.0 (commit unknown) go1.27.3" + platform},
		{"no build info", "", nil,
			"numairqd (devel) (commit unknown) " + runtime.Version() + platform},
	} {
		if got := versionLine(readBuild(tc.v, tc.bi)); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestVersionCommand: --version, -version (the flag package's other
// spelling) and version print the line and exit 0; an argument after
// them is bad usage.
func TestVersionCommand(t *testing.T) {
	old := version
	t.Cleanup(func() { version = old })
	version = "9.9.9-1"
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		code, stdout, stderr := runCmd(args...)
		if code != 0 || !strings.HasPrefix(stdout, "numairqd 9.9.9-1 (") || !strings.HasSuffix(stdout, "\n") || stderr != "" {
			t.Errorf("%q: code %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	if code, _, stderr := runCmd("version", "extra"); code != 2 || !strings.Contains(stderr, `unexpected argument "extra"`) {
		t.Errorf("version extra: code %d, stderr %q", code, stderr)
	}
}

// TestBuildInfoAgreesWithVersion: numairqd_build_info's version,
// revision and goversion are what --version prints for the same build,
// also for a build without a -X version (it once said version="").
func TestBuildInfoAgreesWithVersion(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "21c4ecb0123456789abcdef0123456789abcdef0"}, {Key: "-tags", Value: "netgo"}}}
	for _, v := range []string{"", "0.1.0-1"} {
		b := readBuild(v, bi)
		line := versionLine(b)
		rec := httptest.NewRecorder()
		api.New(metrics.New(&state.Store{}, metrics.Options{Build: b.Build})).Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		parser := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := parser.TextToMetricFamilies(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		series := mfs["numairqd_build_info"].GetMetric()
		if len(series) != 1 {
			t.Fatalf("version %q: %d build_info series", v, len(series))
		}
		labels := map[string]string{}
		for _, l := range series[0].GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if !strings.HasPrefix(line, "numairqd "+labels["version"]+" (commit "+labels["revision"]+") "+labels["goversion"]+" ") ||
			labels["version"] == "" || labels["tags"] != "netgo" || labels["goos"] != runtime.GOOS {
			t.Errorf("version %q: --version says %q, build_info %v", v, line, labels)
		}
	}
}
