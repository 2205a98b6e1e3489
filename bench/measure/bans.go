package measure

import (
	"math"

	"github.com/numairqd/numairqd/pkg/cpumask"
)

// BansRun is one daemon in the bans case: CPUs banned the way cri-o
// bans a pod's CPUs (default_smp_affinity loses them and the irqbalance
// environment file gets IRQBALANCE_BANNED_CPUS), then cleared, Reps
// times. For irqbalance, which cri-o finds not running as a service,
// each write is followed by the one-shot cri-o runs then:
// `IRQBALANCE_BANNED_CPUS=<hex> irqbalance --oneshot`.
type BansRun struct {
	Daemon string `json:"daemon"` // "irqbalance" or "numairqd"
	Banned string `json:"banned"` // the pod's CPUs, list format
	// Source is "" for the files above, SourcePartition when a ban
	// makes the CPUs an isolated cgroup partition and a clear removes it.
	Source string `json:"source,omitempty"`
	// Events alternate ban and clear, rep 1 first. Each Watch is
	// `benchagent watch --event exec:...`: the shell that writes (and
	// for irqbalance runs the one-shot) is the event.
	Events []BanEvent `json:"events"`
	Log    string     `json:"log,omitempty"`
}

// SourcePartition is BansRun.Source for an isolated cgroup partition
// (cpuset.cpus.partition=isolated, read from cpuset.cpus.isolated, 6.8+).
const SourcePartition = "partition"

// BanEvent is one write of the files and what followed.
type BanEvent struct {
	Rep   int    `json:"rep"`
	Kind  string `json:"kind"` // "ban" or "clear"
	Watch Watch  `json:"watch"`
}

// BanReaction is how long one ban or clear took, in seconds from the
// start of the shell that wrote the files: the shell (Watch.EventS)
// plus the poll from which the placement held to the end of the watch.
type BanReaction struct {
	S float64 // -1: never within the window
	// OnBannedBefore is how many queue IRQs' lists held a banned CPU
	// just before the ban (0 makes the ban's figure vacuous).
	OnBannedBefore int
}

// ReactBan is the time to no queue IRQ on a banned CPU, holding until
// the watch ends.
func ReactBan(w Watch, banned cpumask.Mask) BanReaction {
	r := React(w, func(m Map) bool { return len(m) > 0 && m.Avoids(banned) })
	return BanReaction{S: fromWrite(w, r.OwnS), OnBannedBefore: w.Pre.CountOn(banned)}
}

// ReactClear is the time back to the placement before the ban (pre,
// the ban's Watch.Pre): for numairqd the same map, for irqbalance,
// whose one-shot re-places every IRQ, the same set of CPUs (as
// ReactIrqbalance asks after a hotplug).
func ReactClear(daemon string, w Watch, pre Map) BanReaction {
	back := func(m Map) bool { return m.Equal(pre) }
	if daemon == "irqbalance" {
		used := pre.UsedCPUs()
		back = func(m Map) bool { return len(m) == len(pre) && m.UsedCPUs().Equal(used) }
	}
	r := React(w, back)
	return BanReaction{S: fromWrite(w, r.OwnS)}
}

func fromWrite(w Watch, ownS float64) float64 {
	if ownS < 0 {
		return -1
	}
	return w.EventS + ownS
}

// BanTimes returns the ban and clear times of every repetition of r,
// in seconds, NaN where a placement never came (Summarize leaves those
// out), and how many were never.
func BanTimes(r BansRun) (ban, clear []float64, banNever, clearNever int) {
	banned, _ := cpumask.ParseList(r.Banned)
	pre := map[int]Map{}
	for _, ev := range r.Events {
		if ev.Kind == "ban" {
			pre[ev.Rep] = ev.Watch.Pre
		}
	}
	for _, ev := range r.Events {
		var br BanReaction
		switch ev.Kind {
		case "ban":
			br = ReactBan(ev.Watch, banned)
		case "clear":
			br = ReactClear(r.Daemon, ev.Watch, pre[ev.Rep])
		default:
			continue
		}
		s := br.S
		if s < 0 {
			s = math.NaN()
		}
		if ev.Kind == "ban" {
			ban = append(ban, s)
			if br.S < 0 {
				banNever++
			}
		} else {
			clear = append(clear, s)
			if br.S < 0 {
				clearNever++
			}
		}
	}
	return ban, clear, banNever, clearNever
}

// Avoids reports whether every list of m is non-empty and holds no CPU
// of banned.
func (m Map) Avoids(banned cpumask.Mask) bool {
	for _, l := range m {
		c, err := cpumask.ParseList(l)
		if err != nil || c.IsEmpty() || c.Intersects(banned) {
			return false
		}
	}
	return true
}

// CountOn is how many lists of m hold a CPU of banned.
func (m Map) CountOn(banned cpumask.Mask) int {
	n := 0
	for _, l := range m {
		if c, err := cpumask.ParseList(l); err == nil && c.Intersects(banned) {
			n++
		}
	}
	return n
}
