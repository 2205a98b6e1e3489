package metrics

import (
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/numairqd/numairqd/pkg/apply"
	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/fight"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
	"github.com/numairqd/numairqd/pkg/watch"
)

// IRQ states: numairqd_irqs's state label and /status's irqs keys.
const (
	StatePlaced   = "placed"             // planned, and not failed in the last round
	StateManaged  = "managed"            // kernel-managed: never touched
	StateIgnored  = "ignored"            // left alone by the plan
	StateFailed   = "failed"             // write failed, no allowed CPU, or unreadable
	StateMismatch = "effective_mismatch" // the kernel keeps it elsewhere
)

// States lists the IRQ states in the order numairqd_irqs reports them.
var States = [...]string{StatePlaced, StateManaged, StateIgnored, StateFailed, StateMismatch}

var (
	descIRQs = prometheus.NewDesc(namespace+"_irqs",
		"IRQs in the current plan, by device, policy and state (placed, managed, ignored, failed, effective_mismatch).",
		[]string{"device", "policy", "state"}, nil)
	descQueueIRQs = prometheus.NewDesc(namespace+"_device_queue_irqs",
		"Queue IRQs of a device in the current plan.", []string{"device", "policy"}, nil)
	descMeanDistance = prometheus.NewDesc(namespace+"_device_mean_numa_distance",
		"Mean NUMA node distance from a device's node to the CPUs of its placed queue IRQs (10 = local).", []string{"device"}, nil)
	descAllowed = prometheus.NewDesc(namespace+"_allowed_cpus",
		"CPUs IRQs may be placed on: online minus banned, isolated and nohz_full as configured.", nil, nil)
	descLastRound = prometheus.NewDesc(namespace+"_last_round_timestamp_seconds",
		"When the last reconcile round finished.", nil, nil)
	descGeneration = prometheus.NewDesc(namespace+"_state_generation",
		"Generation of the published state: 1 after the first round, +1 every round.", nil, nil)
	descPlannedCPU = prometheus.NewDesc(namespace+"_irq_planned_cpu",
		"CPU a queue IRQ is planned on (only with metrics_per_irq).", []string{"irq", "name", "device"}, nil)
	descCPULoad = prometheus.NewDesc(namespace+"_cpu_irq_load",
		"Smoothed irq+softirq load of an allowed CPU (0..1) as the plan in force places the queues (only with balance: load).",
		[]string{"cpu"}, nil)
	descOnBanned = prometheus.NewDesc(namespace+"_irqs_on_banned_cpus",
		"IRQs numairqd plans (or would, for managed ones) whose affinity after the last round includes an online CPU IRQs may not use "+
			"(banned, isolated, nohz_full, banned by cri-o or tuned); managed=\"false\" ones are numairqd's to fix.",
		[]string{"managed"}, nil)
	descBanned = prometheus.NewDesc(namespace+"_banned_cpus",
		"Online CPUs other tools banned from device IRQs, by source: irqbalance_env (IRQBALANCE_BANNED_CPUS/CPULIST), default_smp_affinity (the online CPUs it leaves out) "+
			"or isolated_partitions (cgroup v2's cpuset.cpus.isolated).",
		[]string{"source"}, nil)
	descPending = prometheus.NewDesc(namespace+"_irqs_effective_pending",
		"Placed IRQs whose effective CPU is still outside the mask written because they have not fired since: a move deferred to the next interrupt.",
		nil, nil)
	descFights = prometheus.NewDesc(namespace+"_irqs_in_fight",
		"IRQs another writer keeps moving off numairqd's placement, by the likely writer (irqbalance, tuned, systemd_link or unknown): numairqd backs off from them.",
		[]string{"writer"}, nil)
	descMode = prometheus.NewDesc(namespace+"_mode",
		"1 for the mode of the last round, 0 for the other: enforce writes the plan, observe (mode: observe or --dry-run) writes nothing.",
		[]string{"mode"}, nil)
	descObjective = prometheus.NewDesc(namespace+"_balance_objective",
		"The busiest allowed CPU's interrupt load over their mean, as the plan in force places the queues (only with balance: load).",
		nil, nil)
)

// stateCollector turns the newest published State into gauges.
type stateCollector struct{ m *Metrics }

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descIRQs, descQueueIRQs, descMeanDistance, descAllowed, descLastRound, descGeneration, descPlannedCPU,
		descCPULoad, descObjective, descBanned, descOnBanned, descPending, descFights, descMode} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.m.store.Load()
	if st == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(descLastRound, prometheus.GaugeValue, unixSeconds(st.Finished))
	ch <- prometheus.MustNewConstMetric(descGeneration, prometheus.GaugeValue, float64(st.Generation))
	ch <- prometheus.MustNewConstMetric(descAllowed, prometheus.GaugeValue, float64(st.Plan.Allowed.Weight()))
	ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(len(st.Plan.EffectiveIRQs(policy.EffectivePending))))
	for _, m := range []config.Mode{config.ModeEnforce, config.ModeObserve} {
		v := 0.0
		if st.Mode() == m {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(descMode, prometheus.GaugeValue, v, string(m))
	}

	// Summed by label: every non-PCI device is device="none".
	type devPolicy struct{ device, policy string }
	type distSum struct{ sum, n int }
	byKey := map[devPolicy]*[len(States)]int{}
	queues := map[devPolicy]int{}
	dist := map[string]distSum{}
	for _, d := range st.Plan.Devices {
		dev := DeviceLabel(d.PCI)
		k := devPolicy{dev, string(d.Policy)}
		if byKey[k] == nil {
			byKey[k] = new([len(States)]int)
		}
		for _, q := range d.IRQs {
			s := IRQState(q, st.Apply.Failed)
			byKey[k][slices.Index(States[:], s)]++
			if q.Role != policy.RoleQueue {
				continue
			}
			queues[k]++
			if s == StatePlaced && q.Distance >= 0 {
				ds := dist[dev]
				dist[dev] = distSum{ds.sum + q.Distance, ds.n + 1}
			}
		}
	}
	for k, counts := range byKey {
		for i, s := range States {
			ch <- prometheus.MustNewConstMetric(descIRQs, prometheus.GaugeValue, float64(counts[i]), k.device, k.policy, s)
		}
		ch <- prometheus.MustNewConstMetric(descQueueIRQs, prometheus.GaugeValue, float64(queues[k]), k.device, k.policy)
	}
	for dev, ds := range dist {
		ch <- prometheus.MustNewConstMetric(descMeanDistance, prometheus.GaugeValue, float64(ds.sum)/float64(ds.n), dev)
	}

	if st.Snapshot != nil {
		movable, managed := onBanned(st)
		ch <- prometheus.MustNewConstMetric(descOnBanned, prometheus.GaugeValue, float64(movable), "false")
		ch <- prometheus.MustNewConstMetric(descOnBanned, prometheus.GaugeValue, float64(managed), "true")
	}
	// Online CPUs only, as plan and /status count them: cri-o pads its
	// mask to 32-bit groups, banning CPUs the machine does not have.
	online := func(m cpumask.Mask) float64 {
		if st.Snapshot != nil {
			m = m.And(st.Snapshot.Online())
		}
		return float64(m.Weight())
	}
	ch <- prometheus.MustNewConstMetric(descBanned, prometheus.GaugeValue, online(st.Bans.Env), "irqbalance_env")
	ch <- prometheus.MustNewConstMetric(descBanned, prometheus.GaugeValue, online(st.Bans.Default), "default_smp_affinity")
	ch <- prometheus.MustNewConstMetric(descBanned, prometheus.GaugeValue, online(st.Bans.Partitions), "isolated_partitions")

	fights := map[string]int{}
	for _, f := range st.Fights {
		fights[f.Writer.Kind]++
	}
	for _, w := range fight.Kinds() {
		ch <- prometheus.MustNewConstMetric(descFights, prometheus.GaugeValue, float64(fights[w]), w)
	}

	if b := st.Plan.Balance; b != nil && b.Ready {
		for _, cl := range b.CPUs {
			ch <- prometheus.MustNewConstMetric(descCPULoad, prometheus.GaugeValue, cl.Load, strconv.Itoa(cl.CPU))
		}
		if b.Mean > 0 {
			ch <- prometheus.MustNewConstMetric(descObjective, prometheus.GaugeValue, b.Peak/b.Mean)
		}
	}

	if !c.m.perIRQ.Load() {
		return
	}
	seen := map[int]bool{}
	for _, d := range st.Plan.Devices {
		for _, q := range d.IRQs {
			if q.CPU < 0 || q.LeftAlone() || seen[q.Number] {
				continue
			}
			seen[q.Number] = true
			ch <- prometheus.MustNewConstMetric(descPlannedCPU, prometheus.GaugeValue, float64(q.CPU),
				strconv.Itoa(q.Number), q.Name, DeviceLabel(d.PCI))
		}
	}
}

// onBanned counts the IRQs not left alone whose mask after st's round
// (where written, else where they were) has a banned online CPU.
func onBanned(st *state.State) (movable, managed int) {
	banned := st.Banned()
	if banned.IsEmpty() {
		return 0, 0
	}
	for _, d := range st.Plan.Devices {
		for _, q := range d.IRQs {
			where := q.Planned
			switch s := IRQState(q, st.Apply.Failed); {
			case s == StateManaged || s == StateIgnored:
				continue
			case s == StateFailed || st.Apply.DryRun > 0:
				where = q.Current
			}
			if where.Intersects(banned) {
				movable++
			}
		}
	}
	return movable, len(st.ManagedOnBanned())
}

// IRQState sorts an IRQ into one of States.
func IRQState(q policy.IRQ, failed map[int]apply.Kind) string {
	if q.Managed {
		return StateManaged
	}
	if q.NoCPU || q.Unreadable {
		return StateFailed
	}
	if q.LeftAlone() {
		return StateIgnored
	}
	if _, ok := failed[q.Number]; ok {
		return StateFailed
	}
	if q.EffectiveState == policy.EffectiveMismatch {
		return StateMismatch
	}
	return StatePlaced
}

// DeviceLabel is the device label: "none" for IRQs with no PCI device.
func DeviceLabel(pci string) string {
	if pci == "" {
		return "none"
	}
	return pci
}

var (
	descUevents = prometheus.NewDesc(namespace+"_uevents_total",
		"Interesting kernel uevents received, by subsystem and action.", []string{"subsystem", "action"}, nil)
	descUeventsDropped = prometheus.NewDesc(namespace+"_uevents_dropped_total",
		"Netlink messages discarded: not_kernel (sent by a process) or malformed.", []string{"reason"}, nil)
	descOverflows = prometheus.NewDesc(namespace+"_netlink_overflows_total",
		"Netlink receive buffer overflows (ENOBUFS), each forcing a full rescan, by socket (uevent, rtnetlink, ethtool, netdev).",
		[]string{"socket"}, nil)
)

// watchCollector reads the watcher's cumulative counters at scrape time.
type watchCollector struct{ stats func() watch.Stats }

func (c watchCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descUevents
	ch <- descUeventsDropped
	ch <- descOverflows
}

func (c watchCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	for k, n := range s.Uevents {
		ch <- prometheus.MustNewConstMetric(descUevents, prometheus.CounterValue, float64(n), k.Subsystem, k.Action)
	}
	for _, r := range []string{"not_kernel", "malformed"} {
		ch <- prometheus.MustNewConstMetric(descUeventsDropped, prometheus.CounterValue, float64(s.Dropped[r]), r)
	}
	for _, sock := range []string{"uevent", "rtnetlink", "ethtool", "netdev"} {
		ch <- prometheus.MustNewConstMetric(descOverflows, prometheus.CounterValue, float64(s.Overflows[sock]), sock)
	}
}
