package validate

import (
	"bytes"
	"debug/elf"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// dir is deploy/kubernetes; root the repository.
const (
	dir  = ".."
	root = "../../.."
)

// kustomization is the part of a kustomize file this directory uses.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
}

// manifests maps each YAML file of deploy/kubernetes to a new value of
// the type it must decode into.
var manifests = map[string]func() any{
	"namespace.yaml":     func() any { return new(corev1.Namespace) },
	"configmap.yaml":     func() any { return new(corev1.ConfigMap) },
	"daemonset.yaml":     func() any { return new(appsv1.DaemonSet) },
	"service.yaml":       func() any { return new(corev1.Service) },
	"podmonitor.yaml":    func() any { return new(monitoringv1.PodMonitor) },
	"kustomization.yaml": func() any { return new(kustomization) },
}

// decode reads deploy/kubernetes/name strictly: an unknown or
// duplicated field, or a value of the wrong type, is an error.
func decode[T any](t *testing.T, name string) *T {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("\n---")) {
		t.Fatalf("%s: one object per file", name)
	}
	v := new(T)
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// TestManifestsDecodeStrictly: every YAML file here is known to the test
// and decodes strictly into its type, with the kind and namespace it
// should have; the strict decoder does refuse a misspelt field.
func TestManifestsDecodeStrictly(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if manifests[filepath.Base(f)] == nil {
			t.Errorf("%s: no type to check it against: add it to manifests", f)
		}
	}
	for name, newV := range manifests {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
			continue
		}
		if err := yaml.UnmarshalStrict(b, newV()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	wantKind := map[string]string{"namespace.yaml": "Namespace", "configmap.yaml": "ConfigMap", "daemonset.yaml": "DaemonSet",
		"service.yaml": "Service", "podmonitor.yaml": "PodMonitor", "kustomization.yaml": "Kustomization"}
	for name, kind := range wantKind {
		var tm struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		b, _ := os.ReadFile(filepath.Join(dir, name))
		if err := yaml.Unmarshal(b, &tm); err != nil {
			t.Fatal(err)
		}
		if tm.Kind != kind {
			t.Errorf("%s: kind %q, want %q", name, tm.Kind, kind)
		}
		if ns := tm.Metadata.Namespace; name != "namespace.yaml" && name != "kustomization.yaml" && ns != "numairqd" {
			t.Errorf("%s: namespace %q, want numairqd", name, ns)
		}
	}

	b, _ := os.ReadFile(filepath.Join(dir, "daemonset.yaml"))
	bad := bytes.Replace(b, []byte("hostNetwork: true"), []byte("hostNetwrok: true"), 1)
	if err := yaml.UnmarshalStrict(bad, new(appsv1.DaemonSet)); err == nil || !strings.Contains(err.Error(), "hostNetwrok") {
		t.Errorf("a misspelt field decoded: %v", err)
	}

	k := decode[kustomization](t, "kustomization.yaml")
	want := []string{"namespace.yaml", "configmap.yaml", "daemonset.yaml", "service.yaml"}
	if !slices.Equal(k.Resources, want) {
		t.Errorf("kustomization resources %q, want %q (podmonitor.yaml stays apart: it needs the operator's CRD)", k.Resources, want)
	}
}

// binDir holds the binary numairqdBinary builds; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// numairqdBinary builds cmd/numairqd once, with the Dockerfile's own go
// build line.
var numairqdBinary = sync.OnceValues(func() (string, error) {
	df, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		return "", err
	}
	args, err := dockerfileBuild(string(df))
	if err != nil {
		return "", err
	}
	binDir, err = os.MkdirTemp("", "numairqd-validate")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(binDir, "numairqd")
	for i, a := range args {
		if a == "/out/numairqd" {
			args[i] = bin
		}
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH, "GOFLAGS=-mod=readonly")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return bin, nil
})

var (
	runLine  = regexp.MustCompile(`(?m)^RUN .*\bgo (build .*)$`)
	argValue = regexp.MustCompile(`\$\{?([A-Z_]+)\}?`)
)

// dockerfileBuild returns the arguments of the Dockerfile's go build,
// continuation lines joined and build args ($VERSION) set to "test".
func dockerfileBuild(df string) ([]string, error) {
	df = strings.ReplaceAll(df, "\\\n", " ")
	m := runLine.FindStringSubmatch(df)
	if m == nil {
		return nil, fmt.Errorf("Dockerfile: no RUN ... go build line")
	}
	line := argValue.ReplaceAllString(m[1], "test")
	var args []string
	for f := range strings.FieldsSeq(line) {
		args = append(args, f)
	}
	// Undo the shell's quoting of -ldflags "...".
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, `"`) {
			j := i
			for len(args[j]) < 2 && j == i || !strings.HasSuffix(args[j], `"`) {
				if j++; j == len(args) {
					return nil, fmt.Errorf("Dockerfile: unbalanced quote in %q", line)
				}
			}
			a, i = strings.Trim(strings.Join(args[i:j+1], " "), `"`), j
		}
		out = append(out, a)
	}
	return out, nil
}

// runFlags are the flags `numairqd run -h` lists.
var runFlags = sync.OnceValues(func() (map[string]bool, error) {
	bin, err := numairqdBinary()
	if err != nil {
		return nil, err
	}
	out, _ := exec.Command(bin, "run", "-h").CombinedOutput() // its flags, exit 0
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z][a-z0-9.-]*)`).FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	if !flags["sysfs"] || !flags["procfs"] {
		return nil, fmt.Errorf("numairqd run -h lists no -sysfs or -procfs:\n%s", out)
	}
	return flags, nil
})

// TestDockerfile: a multi-stage build whose go build line builds a
// static binary from what it copies, on a minimal base, run as the
// entrypoint it copies.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	froms := regexp.MustCompile(`(?m)^FROM (?:--platform=\S+ )?(\S+)(?: AS (\S+))?$`).FindAllStringSubmatch(df, -1)
	if len(froms) != 2 {
		t.Fatalf("Dockerfile: %d FROM lines, want a build stage and the image", len(froms))
	}
	if base := froms[1][1]; !strings.HasPrefix(base, "gcr.io/distroless/static") && base != "scratch" {
		t.Errorf("image base %q, want distroless/static or scratch", base)
	}
	if !strings.HasPrefix(froms[0][1], "golang:${GO_VERSION}") {
		t.Errorf("build stage %q, want golang:${GO_VERSION}", froms[0][1])
	}
	// The toolchain scripts/test.sh builds and tests with.
	ts, err := os.ReadFile(filepath.Join(root, "scripts/test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)$`).FindStringSubmatch(df)
	if goVersion == nil || !bytes.Contains(ts, []byte("go"+goVersion[1]+"}")) {
		t.Errorf("ARG GO_VERSION %v is not the toolchain of scripts/test.sh", goVersion)
	}
	for _, want := range []string{"CGO_ENABLED=0", "COPY --from=build /out/numairqd /usr/local/bin/numairqd",
		`ENTRYPOINT ["/usr/local/bin/numairqd"]`, "USER 0:0"} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}

	// What the build stage copies holds every package of the binary.
	var copied []string
	for _, m := range regexp.MustCompile(`(?m)^COPY (?:--\S+ )?(\S+(?: \S+)*) \S+$`).FindAllStringSubmatch(df, -1) {
		for src := range strings.FieldsSeq(m[1]) {
			if !strings.HasPrefix(src, "/") {
				copied = append(copied, path.Clean(src))
			}
		}
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", "./cmd/numairqd")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	abs, _ := filepath.Abs(root)
	for d := range strings.FieldsSeq(string(out)) {
		rel, _ := filepath.Rel(abs, d)
		if !slices.ContainsFunc(copied, func(c string) bool { return rel == c || strings.HasPrefix(rel, c+"/") }) {
			t.Errorf("the binary needs %s, which the Dockerfile does not copy (it copies %q)", rel, copied)
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if !slices.Contains(copied, f) {
			t.Errorf("the Dockerfile does not copy %s", f)
		}
	}
	ignore, err := os.ReadFile(filepath.Join(dir, "Dockerfile.dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range copied {
		if !bytes.Contains(ignore, []byte("!"+c)) {
			t.Errorf("Dockerfile.dockerignore leaves %s out of the context", c)
		}
	}

	bin, err := numairqdBinary()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has an ELF interpreter: not static, distroless/static has no libc", bin)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s needs shared libraries %q", bin, libs)
	}
	if v, err := exec.Command(bin, "--version").Output(); err != nil || !strings.HasPrefix(string(v), "numairqd test ") {
		t.Errorf("numairqd --version: %q, %v; want the -X main.version of the build line", v, err)
	}
}

// flagArgs parses "--name=value" and "--name value" arguments (after the
// "run" command) into name -> value.
func flagArgs(t *testing.T, args []string) map[string]string {
	t.Helper()
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("container args %q: want the run command first", args)
	}
	out := map[string]string{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			t.Errorf("argument %q is not a flag", a)
			continue
		}
		name, value, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !ok && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			value = args[i]
		}
		out[name] = value
	}
	return out
}

// mount is what the DaemonSet must mount at a path: the host path (or
// ConfigMap) behind it, the hostPath type, and whether it is read-only.
type mount struct {
	hostPath, hostType string
	configMap          string
	readOnly           bool
}

// TestDaemonSet checks what numairqd needs from the pod, against the
// daemon's real flags and the other manifests.
func TestDaemonSet(t *testing.T) {
	ds := decode[appsv1.DaemonSet](t, "daemonset.yaml")
	cm := decode[corev1.ConfigMap](t, "configmap.yaml")
	svc := decode[corev1.Service](t, "service.yaml")
	pm := decode[monitoringv1.PodMonitor](t, "podmonitor.yaml")
	ns := decode[corev1.Namespace](t, "namespace.yaml")
	spec := ds.Spec.Template.Spec

	// The node's namespaces: the host's network (rtnetlink, ethtool and
	// net uevents are per network namespace) and pids (the NAPI
	// kthreads), not its IPC.
	if !spec.HostNetwork || !spec.HostPID || spec.HostIPC {
		t.Errorf("hostNetwork %v hostPID %v hostIPC %v, want true true false", spec.HostNetwork, spec.HostPID, spec.HostIPC)
	}
	if spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		t.Errorf("dnsPolicy %q, want ClusterFirstWithHostNet with hostNetwork", spec.DNSPolicy)
	}
	if spec.PriorityClassName != "system-node-critical" {
		t.Errorf("priorityClassName %q", spec.PriorityClassName)
	}
	if !slices.ContainsFunc(spec.Tolerations, func(tl corev1.Toleration) bool {
		return tl.Operator == corev1.TolerationOpExists && tl.Key == "" && tl.Effect == "" && tl.TolerationSeconds == nil
	}) {
		t.Errorf("tolerations %+v: want one that tolerates every taint (operator Exists, no key, no effect)", spec.Tolerations)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("automountServiceAccountToken: want false, numairqd never calls the API server")
	}
	if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != "privileged" {
		t.Errorf("namespace enforces pod security %q: hostNetwork and hostPath need privileged", got)
	}
	if s := ds.Spec.UpdateStrategy.RollingUpdate; s == nil || s.MaxSurge == nil || s.MaxSurge.IntValue() != 0 {
		t.Error("rolling update with a surge: two numairqd pods on a node, the second refused by the lock")
	}
	for k, v := range ds.Spec.Selector.MatchLabels {
		if ds.Spec.Template.Labels[k] != v || svc.Spec.Selector[k] != v || pm.Spec.Selector.MatchLabels[k] != v {
			t.Errorf("label %s=%s: the DaemonSet's selector, its pods, the Service and the PodMonitor must agree", k, v)
		}
	}

	if len(spec.Containers) != 1 || len(spec.InitContainers) != 0 {
		t.Fatalf("%d containers, %d init containers: want one container", len(spec.Containers), len(spec.InitContainers))
	}
	c := spec.Containers[0]
	if want := "ghcr.io/numairqd/numairqd:" + debianUpstreamVersion(t); c.Image != want {
		t.Errorf("image %q, want %q (deploy/debian/changelog's version)", c.Image, want)
	}

	// Least privilege: root for the owner's write on /proc/irq,
	// CAP_NET_ADMIN for xps_cpus, CAP_SYS_NICE for the NAPI kthreads'
	// CPUs, nothing more.
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("no container securityContext")
	case sc.Privileged != nil && *sc.Privileged:
		t.Error("privileged: numairqd needs no privilege beyond uid 0")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("allowPrivilegeEscalation: want false")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("readOnlyRootFilesystem: want true")
	case sc.RunAsUser == nil || *sc.RunAsUser != 0:
		t.Error("runAsUser: want 0, the owner of /proc/irq/N/smp_affinity_list")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
		!slices.Equal(sc.Capabilities.Add, []corev1.Capability{"NET_ADMIN", "SYS_NICE"}):
		t.Errorf("capabilities %+v: want drop ALL, add NET_ADMIN and SYS_NICE alone", sc.Capabilities)
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Error("seccompProfile: want RuntimeDefault")
	case sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount:
		t.Error("procMount: want Default (the host's /proc/irq is a hostPath mount)")
	}

	// Resources from the bench: peak RSS 15.7 MiB, a 1-P daemon.
	req, lim := c.Resources.Requests, c.Resources.Limits
	mem := func(r corev1.ResourceList) int64 { q := r[corev1.ResourceMemory]; return q.Value() }
	cpu := func(r corev1.ResourceList) int64 { q := r[corev1.ResourceCPU]; return q.MilliValue() }
	const benchPeakRSS = 16072 << 10 // VmHWM, bench/RESULTS.md
	switch {
	case mem(req) < benchPeakRSS || mem(lim) < 2*mem(req):
		t.Errorf("memory request %d, limit %d: want request >= the bench's 15.7 MiB peak, limit >= 2 x request", mem(req), mem(lim))
	case cpu(req) <= 0 || cpu(req) > 100:
		t.Errorf("cpu request %dm: want a small nonzero share", cpu(req))
	case cpu(lim) < 1000:
		t.Errorf("cpu limit %dm: a one-P daemon's rounds would be throttled below 1 CPU", cpu(lim))
	case cpu(req) == cpu(lim) && mem(req) == mem(lim):
		t.Error("Guaranteed QoS: the static CPU manager would give numairqd exclusive CPUs")
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if gml, ok := env["GOMEMLIMIT"]; ok {
		q, err := resource.ParseQuantity(strings.TrimSuffix(gml.Value, "B"))
		if err != nil || q.Value() >= mem(lim) || q.Value() < mem(req) {
			t.Errorf("GOMEMLIMIT %q: want between the memory request and limit (%v)", gml.Value, err)
		}
	}

	// Ports and probes: /healthz on the metrics port the Service and the
	// PodMonitor name.
	var port *corev1.ContainerPort
	for i := range c.Ports {
		if c.Ports[i].Name == "metrics" {
			port = &c.Ports[i]
		}
	}
	if port == nil {
		t.Fatal("no container port named metrics")
	}
	for name, p := range map[string]*corev1.Probe{"livenessProbe": c.LivenessProbe, "startupProbe": c.StartupProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port != intstr.FromString("metrics") || p.HTTPGet.Host != "" {
			t.Errorf("%s: want httpGet /healthz on port metrics at the pod's IP", name)
		}
	}
	if c.LivenessProbe != nil && c.LivenessProbe.PeriodSeconds*c.LivenessProbe.FailureThreshold < 60 {
		t.Errorf("livenessProbe fails after %ds: a failed round makes /healthz 503 until the next (resync 60s)",
			c.LivenessProbe.PeriodSeconds*c.LivenessProbe.FailureThreshold)
	}
	if c.ReadinessProbe != nil {
		t.Error("readinessProbe: a daemon failing /healthz must stay a scrape target (its metrics say why)")
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != intstr.FromString("metrics") || !svc.Spec.PublishNotReadyAddresses ||
		svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Error("service: want headless, publishNotReadyAddresses, targetPort metrics")
	}
	if len(pm.Spec.PodMetricsEndpoints) != 1 || pm.Spec.PodMetricsEndpoints[0].Port == nil || *pm.Spec.PodMetricsEndpoints[0].Port != "metrics" {
		t.Error("podmonitor: want one endpoint on port metrics")
	} else if !slices.ContainsFunc(pm.Spec.PodMetricsEndpoints[0].RelabelConfigs, func(r monitoringv1.RelabelConfig) bool {
		return r.TargetLabel == "job" && r.Replacement != nil && *r.Replacement == "numairqd"
	}) {
		t.Error(`podmonitor: want job="numairqd", which deploy/prometheus's rules match`)
	}

	// The args: every flag is one numairqd run has; the paths they give
	// are the mounts below.
	known, err := runFlags()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Command) != 0 {
		t.Errorf("command %q: the image's entrypoint is numairqd", c.Command)
	}
	flags := flagArgs(t, c.Args)
	for name := range flags {
		if !known[name] {
			t.Errorf("--%s is not a flag of numairqd run (it has %v)", name, slices.Sorted(maps.Keys(known)))
		}
	}
	for _, f := range []string{"config", "sysfs", "procfs", "etc", "listen"} {
		if _, ok := flags[f]; !ok {
			t.Errorf("no --%s", f)
		}
	}
	for _, f := range []string{"dry-run", "oneshot", "no-events", "lock-file"} {
		if _, ok := flags[f]; ok {
			t.Errorf("--%s: the DaemonSet runs the real daemon, with events and the host's lock", f)
		}
	}
	if want := "$(POD_IP):" + strconv.Itoa(int(port.ContainerPort)); flags["listen"] != want {
		t.Errorf("--listen %q, want %q", flags["listen"], want)
	}
	if e := env["POD_IP"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "status.podIP" {
		t.Error("POD_IP: want the downward API's status.podIP (the node's address, with hostNetwork)")
	}

	proc, sys, etc, cfg := flags["procfs"], flags["sysfs"], flags["etc"], flags["config"]
	want := map[string]mount{
		proc:                   {hostPath: "/proc", hostType: "Directory", readOnly: true},
		proc + "/irq":          {hostPath: "/proc/irq", hostType: "Directory"},
		sys:                    {hostPath: "/sys", hostType: "Directory", readOnly: true},
		sys + "/devices":       {hostPath: "/sys/devices", hostType: "Directory"},
		etc + "/sysconfig":     {hostPath: "/etc/sysconfig", hostType: "DirectoryOrCreate", readOnly: true},
		etc + "/default":       {hostPath: "/etc/default", hostType: "DirectoryOrCreate", readOnly: true},
		path.Dir(cfg):          {configMap: cm.Name, readOnly: true},
		path.Dir(lockFileFlag): {hostPath: "/run/numairqd", hostType: "DirectoryOrCreate"},
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	got := map[string]mount{}
	for _, vm := range c.VolumeMounts {
		v, ok := volumes[vm.Name]
		if !ok {
			t.Errorf("mount %s: no volume %q", vm.MountPath, vm.Name)
			continue
		}
		if vm.SubPath != "" || vm.SubPathExpr != "" {
			t.Errorf("mount %s: subPath, which kubelet never updates (the config's ..data swap would be missed)", vm.MountPath)
		}
		if vm.MountPropagation != nil && *vm.MountPropagation != corev1.MountPropagationNone {
			t.Errorf("mount %s: propagation %s", vm.MountPath, *vm.MountPropagation)
		}
		m := mount{readOnly: vm.ReadOnly}
		switch {
		case v.HostPath != nil:
			m.hostPath = v.HostPath.Path
			if v.HostPath.Type != nil {
				m.hostType = string(*v.HostPath.Type)
			}
		case v.ConfigMap != nil:
			m.configMap = v.ConfigMap.Name
		default:
			t.Errorf("mount %s: volume %q is neither hostPath nor configMap", vm.MountPath, vm.Name)
		}
		got[vm.MountPath] = m
	}
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("nothing mounted at %s, want %+v", p, w)
		} else if g != w {
			t.Errorf("mount %s: %+v, want %+v", p, g, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("mount %s: not one numairqd needs", p)
		}
	}
	if len(volumes) != len(c.VolumeMounts) {
		t.Errorf("%d volumes, %d mounts: a volume mounted nowhere", len(volumes), len(c.VolumeMounts))
	}
	if _, ok := cm.Data[path.Base(cfg)]; !ok {
		t.Errorf("configmap %s has no key %s (--config %s)", cm.Name, path.Base(cfg), cfg)
	}
}

// lockFileFlag is numairqd run's --lock-file default, which the
// DaemonSet keeps (the host's /run/numairqd).
const lockFileFlag = "/run/numairqd/numairqd.lock"

// TestLockFileDefault: numairqd run -h still gives the lock's default
// path the DaemonSet mounts.
func TestLockFileDefault(t *testing.T) {
	bin, err := numairqdBinary()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(bin, "run", "-h").CombinedOutput()
	if !strings.Contains(string(out), `(default "`+lockFileFlag+`")`) {
		t.Errorf("numairqd run -h does not give %s as --lock-file's default:\n%s", lockFileFlag, out)
	}
}

// debianUpstreamVersion is the upstream part of deploy/debian/changelog's
// newest version: "0.1.0" of "numairqd (0.1.0-1) unstable".
func debianUpstreamVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "deploy/debian/changelog"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^numairqd \(([^)-]+)(?:-[^)]*)?\)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("deploy/debian/changelog: no version on its first line")
	}
	return string(m[1])
}
