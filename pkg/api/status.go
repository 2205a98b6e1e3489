package api

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/fight"
	"github.com/numairqd/numairqd/pkg/kernfs"
	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
)

// Status is the JSON served at /status: what /plan leaves out of the
// newest State, for `numairqd status`, matched to /plan by Generation.
type Status struct {
	Version string `json:"version"`
	// BootID is the daemon's machine's boot_id (ReadBootID), for
	// `numairqd status` to tell another machine's daemon from its own.
	BootID      string    `json:"boot_id,omitempty"`
	Generation  uint64    `json:"generation"`
	Trigger     string    `json:"trigger"`
	Finished    time.Time `json:"finished"`
	TookSeconds float64   `json:"took_seconds"` // read, plan and apply
	DryRun      bool      `json:"dry_run"`
	Mode        string    `json:"mode"`   // observe (dry_run) or enforce
	Config      string    `json:"config"` // its file, "" for the defaults
	// ConfigRejected is the config file that failed to load since the
	// last successful load: Config stays in force.
	ConfigRejected *StatusRejected `json:"config_rejected,omitempty"`
	// Consistent is false when CPUs kept changing during the read.
	Consistent bool         `json:"consistent"`
	Online     string       `json:"online"`
	Allowed    string       `json:"allowed"`
	Nodes      []StatusNode `json:"nodes"`
	// Bans are the online CPUs kept from device IRQs, by source.
	Bans []StatusBan `json:"bans"`
	// BansError is why other tools' bans could not be read this round.
	BansError string `json:"bans_error,omitempty"`
	// IRQs counts the plan's IRQs by state, and "effective_pending".
	IRQs   map[string]int `json:"irqs"`
	Writes StatusWrites   `json:"writes"`
	// Failed are the IRQs not where the plan wants them.
	Failed []StatusFailed `json:"failed"`
	// ManagedOnBanned are kernel-managed IRQs with a banned CPU.
	ManagedOnBanned []int `json:"managed_on_banned"`
	// Fights are the IRQs another writer keeps moving (pkg/fight).
	Fights []fight.Fight `json:"fights"`
}

// StatusRejected is a rejected config: when, and the loader's error
// (FILE:LINE: WHY, a line per problem).
type StatusRejected struct {
	At    time.Time `json:"at"`
	Error string    `json:"error"`
}

// ReadBootID is procfs's sys/kernel/random/boot_id, a random ID the
// kernel draws at each boot: it tells machines apart without naming
// them. "" when unreadable.
func ReadBootID(procfs string) string {
	s, _, err := kernfs.ReadOptional(filepath.Join(procfs, "sys/kernel/random/boot_id"))
	if err != nil {
		return ""
	}
	return s
}

// StatusNode is an online node and its online CPUs.
type StatusNode struct {
	Node int    `json:"node"`
	CPUs string `json:"cpus"`
}

// StatusBan is one source of bans, with the file it came from.
type StatusBan struct {
	Source string `json:"source"`
	CPUs   string `json:"cpus"`
	File   string `json:"file,omitempty"`
}

// StatusWrites are a round's IRQ write counts (apply.Result).
type StatusWrites struct {
	Written   int `json:"written"`
	Unchanged int `json:"unchanged"`
	DryRun    int `json:"dry_run"`
}

// StatusFailed is an IRQ not placed, with the failed write's Kind, Errno.
type StatusFailed struct {
	IRQ       int    `json:"irq"`
	Name      string `json:"name"`
	Device    string `json:"device"`
	State     string `json:"state"`
	Kind      string `json:"kind,omitempty"`
	Errno     string `json:"errno,omitempty"`
	Planned   string `json:"planned"`
	Effective string `json:"effective,omitempty"`
	Reason    string `json:"reason"`
}

// NewStatus builds the Status of st.
func NewStatus(st *state.State, version string) Status {
	s := Status{Version: version, Generation: st.Generation, Trigger: st.Trigger, Finished: st.Finished.UTC(),
		TookSeconds: st.Took().Seconds(), DryRun: st.DryRun, Mode: string(st.Mode()), Consistent: st.Consistent, Allowed: st.Plan.Allowed.String(),
		Nodes: []StatusNode{}, IRQs: map[string]int{}, Failed: []StatusFailed{}, ManagedOnBanned: []int{},
		Fights: append([]fight.Fight{}, st.Fights...),
		Writes: StatusWrites{Written: st.Apply.Written, Unchanged: st.Apply.Unchanged, DryRun: st.Apply.DryRun}}
	if st.Config != nil {
		s.Config = st.Config.Source
	}
	if st.BansErr != nil {
		s.BansError = st.BansErr.Error()
	}
	if st.Snapshot != nil {
		s.Online = st.Snapshot.Online().String()
		for _, n := range st.Snapshot.Nodes() {
			s.Nodes = append(s.Nodes, StatusNode{Node: n.ID, CPUs: n.CPUs.String()})
		}
		for _, q := range st.ManagedOnBanned() {
			s.ManagedOnBanned = append(s.ManagedOnBanned, q.Number)
		}
	}
	s.Bans = statusBans(st)
	for _, name := range metrics.States {
		s.IRQs[name] = 0
	}
	s.IRQs["effective_pending"] = len(st.Plan.EffectiveIRQs(policy.EffectivePending))
	writes := map[int]int{} // IRQ -> index of its last failed write
	for i, w := range st.Apply.Writes {
		if w.Kind.Failed() && w.Write.Kind == policy.WriteIRQAffinity {
			writes[w.IRQ] = i
		}
	}
	for _, d := range st.Plan.Devices {
		for _, q := range d.IRQs {
			state := metrics.IRQState(q, st.Apply.Failed)
			s.IRQs[state]++
			if state != metrics.StateFailed && state != metrics.StateMismatch {
				continue
			}
			f := StatusFailed{IRQ: q.Number, Name: q.Name, Device: metrics.DeviceLabel(d.PCI), State: state, Planned: q.Planned.String(), Reason: q.Reason}
			if state == metrics.StateMismatch {
				f.Effective = q.Effective.String()
			}
			if i, ok := writes[q.Number]; ok {
				f.Kind, f.Errno = st.Apply.Writes[i].Kind.String(), st.Apply.Writes[i].Errno
			}
			s.Failed = append(s.Failed, f)
		}
	}
	slices.SortFunc(s.Failed, func(a, b StatusFailed) int { return a.IRQ - b.IRQ })
	return s
}

// statusBans are the plan's Excluded with their files, in banOrder.
func statusBans(st *state.State) []StatusBan {
	out := []StatusBan{}
	for _, e := range st.Plan.Excluded {
		b := StatusBan{Source: e.Source, CPUs: e.CPUs.String()}
		switch {
		case e.Source == policy.ExcludedBanned && st.Config != nil:
			b.File = st.Config.Source
		case e.Source == policy.BanEnvFile:
			b.File = st.Bans.EnvFile
		}
		out = append(out, b)
	}
	slices.SortStableFunc(out, func(a, b StatusBan) int { return banRank(a.Source) - banRank(b.Source) })
	return out
}

// banOrder is the order of /status's bans; others come last.
var banOrder = []string{policy.ExcludedBanned, policy.ExcludedIsolated, policy.ExcludedNohzFull, policy.BanEnvFile, policy.BanDefaultAffinity, policy.BanIsolatedPartitions}

func banRank(source string) int {
	if i := slices.Index(banOrder, source); i >= 0 {
		return i
	}
	return len(banOrder)
}

// status is 503 until a round has completed, then the newest Status.
func (a *API) status(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	st := a.m.Store().Load()
	if st == nil {
		http.Error(w, "no round has completed yet", http.StatusServiceUnavailable)
		return
	}
	s := NewStatus(st, a.m.Version())
	s.BootID = a.m.BootID()
	if at, why, ok := a.m.Rejected(); ok {
		s.ConfigRejected = &StatusRejected{At: at.UTC(), Error: why}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		a.log.Error("cannot encode the status", zap.Error(err))
		http.Error(w, "cannot encode the status", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}
