package daemon

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestIsolatedPartitionRebans: an isolated partition made while the
// daemon runs moves the queue IRQs off its CPUs with no event, reload
// or restart (TestPollSeesAChangeWithinAnInterval times the poll); the round is a bans round, the
// metric counts the CPUs, and removing the partition brings the plan
// back.
func TestIsolatedPartitionRebans(t *testing.T) {
	tree := fixture(t)
	tree.WriteFileMode("sys/fs/cgroup/cpuset.cpus.isolated", "\n", 0o444)
	cfg := filepath.Join(t.TempDir(), "numairqd.yaml")
	writeFile(t, cfg, "listen: \"\"\n")
	rec := newRecorder()
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, cfg, func(o *Options) { o.Notify = rec })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	rec.waitFor(t, "READY=1")
	eventually(t, "queue 0 on CPU 4", func() bool { return affinity(t, tree, 25) == "4" })

	// cpuset.cpus.partition: isolated on a cgroup of CPUs 4-5.
	made := time.Now()
	tree.WriteFileMode("sys/fs/cgroup/cpuset.cpus.isolated", "4-5\n", 0o444)
	eventually(t, "queues off CPUs 4-5", func() bool {
		for q := range 6 {
			if a := affinity(t, tree, 25+2*q); a == "4" || a == "5" {
				return false
			}
		}
		return true
	})
	t.Logf("the queues left the partition after %v (poll %v)", time.Since(made), partitionsPoll)
	eventually(t, "a round triggered by the partition", func() bool {
		return counter(t, d, "numairqd_rounds_total", "trigger", "bans") >= 1
	})
	eventually(t, "2 CPUs banned by isolated partitions", func() bool {
		return counter(t, d, "numairqd_banned_cpus", "source", "isolated_partitions") == 2
	})
	tree.WriteFileMode("sys/fs/cgroup/cpuset.cpus.isolated", "\n", 0o444)
	eventually(t, "queue 0 back on CPU 4", func() bool { return affinity(t, tree, 25) == "4" })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestNoPartitionsFileSaidOnce: without cgroup v2 the daemon says once
// that partitions are not followed, and why.
func TestNoPartitionsFileSaidOnce(t *testing.T) {
	tree := fixture(t)
	core, logs := observer.New(zap.InfoLevel)
	rec := newRecorder()
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, "", func(o *Options) {
		o.Notify, o.Log, o.Listen = rec, zap.New(core), "127.0.0.1:0"
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	rec.waitFor(t, "READY=1")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := logs.FilterMessageSnippet("isolated partitions are not followed: cgroup v2 is not mounted").Len(); n != 1 {
		t.Errorf("%d messages that partitions are not followed, want 1: %v", n, logs.All())
	}
}

// TestDefaultAffinityRebans: with honor_default_smp_affinity and no
// environment file, cri-o writes only default_smp_affinity, which no
// event reports; the poll sees it, as cri-o's bytes ("000000cf": CPUs
// 4-5 cleared), and its restore.
func TestDefaultAffinityRebans(t *testing.T) {
	tree := fixture(t)
	tree.WriteFile("proc/irq/default_smp_affinity", "ff\n")
	cfg := filepath.Join(t.TempDir(), "numairqd.yaml")
	writeFile(t, cfg, "listen: \"\"\nhonor_default_smp_affinity: true\n")
	d := newDaemon(t, tree, &fileWriter{proc: tree.Proc()}, cfg, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	eventually(t, "queue 0 on CPU 4", func() bool { return affinity(t, tree, 25) == "4" })
	tree.WriteFile("proc/irq/default_smp_affinity", "000000cf")
	eventually(t, "queues off CPUs 4-5", func() bool {
		for q := range 6 {
			if a := affinity(t, tree, 25+2*q); a == "4" || a == "5" {
				return false
			}
		}
		return true
	})
	tree.WriteFile("proc/irq/default_smp_affinity", "000000ff")
	eventually(t, "queue 0 back on CPU 4", func() bool { return affinity(t, tree, 25) == "4" })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
