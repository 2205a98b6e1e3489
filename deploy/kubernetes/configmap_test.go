package kubernetes

import (
	"os"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/numairqd/numairqd/pkg/config"
)

// TestConfigMapConfig: the config the ConfigMap ships is one numairqd
// accepts, and its resync_interval is the one the NoRound alert of
// deploy/prometheus assumes (3 x 60 s), with the data path on.
func TestConfigMapConfig(t *testing.T) {
	b, err := os.ReadFile("configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(b, &cm); err != nil {
		t.Fatalf("configmap.yaml: %v", err)
	}
	data, ok := cm.Data["numairqd.yaml"]
	if !ok {
		t.Fatal("configmap.yaml: no numairqd.yaml key")
	}
	cfg, err := config.Parse("configmap.yaml: numairqd.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ResyncInterval != time.Minute {
		t.Errorf("resync_interval %v: NumairqdNoRound in deploy/prometheus/numairqd.rules.yml assumes 60s", cfg.ResyncInterval)
	}
	rules, err := os.ReadFile("../prometheus/numairqd.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rules), "time() - numairqd_last_round_timestamp_seconds > 3 * 60") {
		t.Error("numairqd.rules.yml: NumairqdNoRound no longer says 3 * 60; keep it and resync_interval together")
	}
	if cfg.XPS != config.XPSFollow || cfg.NAPIThreads != config.NAPIThreadsFollow || !cfg.IsolatedPartitions {
		t.Errorf("xps %s napi_threads %s isolated_partitions %v: the DaemonSet grants the data path's privileges and mounts the cgroup root; want follow, follow, true",
			cfg.XPS, cfg.NAPIThreads, cfg.IsolatedPartitions)
	}
	if cfg.IrqbalanceEnvFile != "auto" {
		t.Errorf("irqbalance_env_file %q: the DaemonSet mounts the host's /etc/sysconfig and /etc/default for auto", cfg.IrqbalanceEnvFile)
	}
}
