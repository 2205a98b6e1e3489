package main

import (
	"cmp"
	"fmt"
	"math"

	"github.com/numairqd/numairqd/bench/measure"
)

// bans writes the section on bans written as cri-o writes them: per
// daemon the time from the write to no queue IRQ on the banned CPU, and
// back after the clear, median (min–max) of the repetitions.
func (w *writer) bans(runs []measure.BansRun) {
	if len(runs) == 0 {
		return
	}
	w.p("## Bans from cri-o\n")
	w.p("Guest: the 4-node guest (virtio-net 6 pairs on node 2). One boot, irqbalance first, then numairqd from the driver's placement. A *ban* is what cri-o does for a pod with `irq-load-balancing.crio.io: \"disable\"` on CPU %s: it writes `/proc/irq/default_smp_affinity` without the CPU, then `IRQBALANCE_BANNED_CPUS=\"<hex>\"` into `/etc/default/irqbalance`; a *clear* (the pod's PostStop) writes both back, the mask all zeros. numairqd runs in the background and hears the file. irqbalance is not running, as cri-o finds it when it is not a systemd service: after each write the shell runs what cri-o then runs, `IRQBALANCE_BANNED_CPUS=<hex> irqbalance --oneshot`, which forks and places after its 10 s interval (before the first ban, one `irqbalance --oneshot --foreground` without bans gave irqbalance its own starting placement). The guest agent runs that shell as its event and polls the queue IRQs' `smp_affinity_list` every 50 ms until the map has been quiet for 3 s (irqbalance) or 2 s (numairqd), or the %.0f s window passed.\n",
		runs[0].Banned, w.meta.WindowS)
	w.p("- **ban**: from the start of the shell that writes the files to the first poll from which no queue IRQ's list holds the banned CPU, holding until the watch ends.")
	w.p("- **clear**: from the start of the clearing shell to the first poll from which the placement is back as it was before the ban, holding: numairqd — the same map; irqbalance, whose one-shot re-places every IRQ — the same set of CPUs.\n")
	w.p("| daemon | ban: no queue IRQ on CPU %s | clear: back to the placement before the ban | queue IRQs on CPU %s before each ban |", runs[0].Banned, runs[0].Banned)
	w.p("|---|---|---|---|")
	med := map[string][2]float64{}
	var part []measure.BansRun
	for _, r := range runs {
		if r.Source == measure.SourcePartition {
			part = append(part, r)
			continue
		}
		ban, clear := w.banRow(r)
		med[r.Daemon] = [2]float64{measure.Summarize(ban).Median, measure.Summarize(clear).Median}
	}
	w.p("")
	w.partitions(part, runs[0].Banned)
	a, okA := med["irqbalance"]
	b, okB := med["numairqd"]
	if !okA || !okB {
		return
	}
	for i, what := range []string{"ban written as cri-o writes it, to no queue IRQ on the banned CPU", "ban cleared, to the placement before it"} {
		x, y := a[i], b[i]
		switch {
		case math.IsNaN(x) && math.IsNaN(y):
		case math.IsNaN(x):
			w.ratios = append(w.ratios, fmt.Sprintf("%s: numairqd %.2f s median; irqbalance's one-shot never within the window", what, y))
			w.numaWins = append(w.numaWins, fmt.Sprintf("%s: irqbalance never within the window, numairqd %.2f s median", what, y))
		case math.IsNaN(y):
			w.ratios = append(w.ratios, fmt.Sprintf("%s: irqbalance %.2f s median; numairqd never within the window", what, x))
			w.irqbWins = append(w.irqbWins, fmt.Sprintf("%s: numairqd never within the window, irqbalance %.2f s median", what, x))
		default:
			s := fmt.Sprintf("%s (median): irqbalance %.2f s, numairqd %.2f s", what, x, y)
			if y > 0 {
				s += fmt.Sprintf(" — irqbalance takes %.1fx as long", x/y)
			}
			w.ratios = append(w.ratios, s)
			w.compare(what+" (median s)", x, y, true, "%.2f s")
		}
	}
}

// banRow writes r's row: the ban and clear times, and how many queue
// IRQs were on the banned CPUs before each ban; it returns the times.
func (w *writer) banRow(r measure.BansRun) (ban, clear []float64) {
	ban, clear, banNever, clearNever := measure.BanTimes(r)
	var before []string
	for _, ev := range r.Events {
		if ev.Kind == "ban" {
			before = append(before, fmt.Sprint(ev.Watch.Pre.CountOn(mustMask(r.Banned))))
		}
	}
	w.p("| %s | %s | %s | %s |", r.Daemon, neverSumm(ban, banNever), neverSumm(clear, clearNever), joinOr(before, "–"))
	return ban, clear
}

// partitions writes the isolated-partition events of the same boot:
// numairqd's times, irqbalance's none, as it reads no partitions.
func (w *writer) partitions(runs []measure.BansRun, cpu string) {
	w.p("**Isolated partition.** In the same boot, after the bans, numairqd still running: CPU %s made an isolated cgroup v2 partition (`mkdir /sys/fs/cgroup/bench-p`, `echo %s >cpuset.cpus`, `echo isolated >cpuset.cpus.partition`, as cri-o does for a pod with `cpu-load-balancing.crio.io: \"disable\"`), then removed (`rmdir`), timed as a ban and a clear above. The kernel notifies no change of `cpuset.cpus.isolated`; numairqd reads it once a second.\n", cpu, cpu)
	if len(runs) == 0 {
		w.p("Not measured: the guest kernel (%s) has no `cpuset.cpus.isolated` (Linux 6.8+).\n", cmp.Or(w.meta.GuestKernel, "unknown"))
		return
	}
	w.p("| daemon | partition made: no queue IRQ on CPU %s | removed: back to the placement before | queue IRQs on CPU %s before each |", cpu, cpu)
	w.p("|---|---|---|---|")
	for _, r := range runs {
		w.banRow(r)
	}
	w.p("| irqbalance | n/a: never (it does not read `cpuset.cpus.isolated`; not run) | n/a | – |\n")
}

// neverSumm is summ of xs (NaN: never), saying how many were never.
func neverSumm(xs []float64, never int) string {
	s := measure.Summarize(xs)
	if s.N == 0 {
		if never > 0 {
			return fmt.Sprintf("never (%d of %d)", never, never)
		}
		return "–"
	}
	out := summ(s)
	if never > 0 {
		out += fmt.Sprintf("; **%d of %d never**", never, len(xs))
	}
	return out
}

func joinOr(xs []string, empty string) string {
	if len(xs) == 0 {
		return empty
	}
	out := xs[0]
	for _, x := range xs[1:] {
		out += ", " + x
	}
	return out
}
