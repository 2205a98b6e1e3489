package measure

import (
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// Raw is everything one bench run recorded, as bench/qemu_test.go
// writes it to raw.json.
type Raw struct {
	Meta      Meta           `json:"meta"`
	Placement []PlacementRun `json:"placement"`
	Daemons   []DaemonRun    `json:"daemons"`
	Traffic   []TrafficRun   `json:"traffic"`
	Bans      []BansRun      `json:"bans,omitempty"`
	Transmit  *TransmitRun   `json:"transmit,omitempty"`
}

// Meta describes the run.
type Meta struct {
	Date        string  `json:"date"`
	Command     string  `json:"command"`
	HostKernel  string  `json:"host_kernel"`
	GuestKernel string  `json:"guest_kernel"`
	QEMU        string  `json:"qemu"`
	Irqbalance  string  `json:"irqbalance"`
	Go          string  `json:"go"`
	Commit      string  `json:"commit"`
	Reps        int     `json:"reps"`
	WindowS     float64 `json:"window_s"`
	IdleS       float64 `json:"idle_s"`
	ChurnCycles int     `json:"churn_cycles"`
	WallS       float64 `json:"wall_s"`
	// Baseline is the revision numairqd was also built at
	// (BENCH_BASELINE), measured in daemon boots of its own beside the
	// working tree's; empty without one.
	Baseline string `json:"baseline,omitempty"`
	// Host load while the guests ran, sampled every 5 s: the highest
	// 1-minute load average, and how many samples saw a QEMU that was
	// not the bench's (another test sharing the 2 cores).
	LoadMax        float64 `json:"load_max"`
	Samples        int     `json:"samples"`
	ForeignSamples int     `json:"foreign_qemu_samples"`
}

// PlacementRun is one guest in which both daemons placed the IRQs once
// from the same starting state: irqbalance first, then every
// affinity is written back to Start, then numairqd.
type PlacementRun struct {
	Name   string `json:"name"`
	Title  string `json:"title"`
	Banned string `json:"banned"` // CPU list given to both daemons
	// States: before any daemon, after irqbalance --oneshot, after the
	// reset, after numairqd --oneshot.
	Start      guestinfo.State `json:"start"`
	Irqbalance guestinfo.State `json:"irqbalance"`
	Reset      guestinfo.State `json:"reset"`
	Numairqd   guestinfo.State `json:"numairqd"`
	// Plan is `numairqd plan --format json` taken after the reset.
	Plan                       []byte  `json:"plan,omitempty"`
	IrqbalanceS, NumairqdS     float64 // wall time of each one-shot run in the guest
	IrqbalanceRC, NumairqdRC   int
	IrqbalanceLog, NumairqdLog string
}

// DaemonRun is one guest in which one daemon ran in the background
// while the script measured its cost and reactions. The floor
// (`benchagent floor`) runs in a boot of its own in the same form, with
// churn samples only.
type DaemonRun struct {
	Daemon string `json:"daemon"` // "irqbalance", "numairqd" or "floor"
	// Build is the revision numairqd was built at when it is not the
	// working tree (Meta.Baseline).
	Build string          `json:"build,omitempty"`
	Title string          `json:"title"`
	Start guestinfo.State `json:"start"`
	// Settled is the first placement the daemon made after it started.
	Settled Watch `json:"settled"`
	// Cost samples: idle-R-0 and idle-R-1 around the R-th idle period,
	// churn-R-0 and churn-R-1 around the R-th churn block, and KIND-R-0
	// and KIND-R-1 around the R-th watch of each event KIND (offline,
	// online, rebind), R = 1..Reps.
	Cost   map[string]CostSample `json:"cost"`
	Events []Event               `json:"events"`
	Log    string                `json:"log"`
	// Floor is the floor's own account of its run (daemon "floor").
	Floor *FloorSummary `json:"floor,omitempty"`
}

// Name labels the run: the daemon, followed by the build's revision
// for a baseline ("numairqd 716edae").
func (dr DaemonRun) Name() string {
	if dr.Build == "" {
		return dr.Daemon
	}
	return dr.Daemon + " " + dr.Build
}

// Event is one CPU hotplug or driver re-bind and what followed.
type Event struct {
	Rep   int    `json:"rep"`
	Kind  string `json:"kind"` // offline, online, rebind
	Watch Watch  `json:"watch"`
	// Plan is `numairqd plan --format json` taken after the watch
	// (numairqd runs only): the placement numairqd wants for the CPU
	// set after the event.
	Plan []byte `json:"plan,omitempty"`
}

// Map is a device's queue IRQs by normalised name ("input.0",
// "output.3") to their CPU list.
type Map map[string]string

// Watch is what `benchagent watch` or `benchagent settle` printed.
type Watch struct {
	Event string `json:"event"`
	// Pre is the map just before the event; Baseline the first sample
	// after the event's writes returned (the driver's own rewrite).
	Pre      Map   `json:"pre"`
	Baseline Map   `json:"baseline"`
	Online   []int `json:"online"`     // online CPUs after the event
	NewCPUs  []int `json:"new_cpus"`   // CPUs the event brought online
	PreCPUs  []int `json:"pre_online"` // online CPUs before the event
	// EventS is how long the event's writes took.
	EventS float64 `json:"event_s"`
	// Samples hold every change after the event (the first is the
	// baseline at T=0); T is seconds since the event's writes returned.
	Samples []Sample `json:"samples"`
	EndS    float64  `json:"end_s"`
	Stop    string   `json:"stop"` // why polling ended: "quiet", "window"
	Polls   int      `json:"polls"`
}

// Sample is the map at one poll where it changed.
type Sample struct {
	T         float64 `json:"t"`
	Affinity  Map     `json:"aff"`
	Effective Map     `json:"eff"`
}

// CostSample is /proc/PID/stat, /proc/PID/status, the threads'
// schedstat and /proc/PID/io at one moment, and for numairqd its round counters from the metrics
// endpoint, scraped so that the scrape falls outside the period the
// sample opens or closes (see costProbe in bench/qemu_test.go).
type CostSample struct {
	UptimeS float64 `json:"uptime_s"`
	Stat    string  `json:"stat"`
	Status  string  `json:"status"`
	// Schedstat is /proc/PID/task/*/schedstat, one line per thread.
	Schedstat string `json:"schedstat,omitempty"`
	IO        string `json:"io,omitempty"`      // /proc/PID/io, or the error reading it
	Metrics   string `json:"metrics,omitempty"` // numairqd_* counter lines of /metrics
}
