package measure

import (
	"math"
	"slices"
	"testing"

	"github.com/numairqd/numairqd/internal/fakesys"
)

func TestBanTimes(t *testing.T) {
	pre := Map{"input.0": "4", "input.1": "5"}
	banned := Map{"input.0": "4", "input.1": "4"}
	swapped := Map{"input.0": "5", "input.1": "4"}
	tests := []struct {
		name       string
		daemon     string
		ban, clear Watch
		wantBan    float64 // NaN: never
		wantClear  float64
	}{
		{
			name:   "numairqd moves and moves back",
			daemon: "numairqd",
			ban: Watch{Pre: pre, EventS: 0.05, Stop: "quiet",
				Samples: []Sample{{T: 0, Affinity: pre}, {T: 0.4, Affinity: banned}}},
			clear: Watch{Pre: banned, EventS: 0.05, Stop: "quiet",
				Samples: []Sample{{T: 0, Affinity: banned}, {T: 0.3, Affinity: pre}}},
			wantBan: 0.45, wantClear: 0.35,
		},
		{
			name:   "placed before the first poll",
			daemon: "numairqd",
			ban: Watch{Pre: pre, EventS: 0.1, Stop: "quiet",
				Samples: []Sample{{T: 0, Affinity: banned}}},
			clear: Watch{Pre: banned, EventS: 0.1, Stop: "quiet",
				Samples: []Sample{{T: 0, Affinity: pre}}},
			wantBan: 0.1, wantClear: 0.1,
		},
		{
			name:   "irqbalance's one-shot: back on the same CPUs counts",
			daemon: "irqbalance",
			ban: Watch{Pre: pre, EventS: 0.02, Stop: "quiet",
				Samples: []Sample{{T: 0, Affinity: pre}, {T: 10.5, Affinity: banned}}},
			clear: Watch{Pre: banned, EventS: 0.02, Stop: "quiet",
				Samples: []Sample{{T: 0, Affinity: banned}, {T: 10.4, Affinity: swapped}}},
			wantBan: 10.52, wantClear: 10.42,
		},
		{
			name:   "the same CPUs are not the same map for numairqd",
			daemon: "numairqd",
			ban: Watch{Pre: pre, Stop: "quiet",
				Samples: []Sample{{T: 0, Affinity: pre}, {T: 1, Affinity: banned}}},
			clear: Watch{Pre: banned, Stop: "window",
				Samples: []Sample{{T: 0, Affinity: banned}, {T: 1, Affinity: swapped}}},
			wantBan: 1, wantClear: math.NaN(),
		},
		{
			name:   "never moved off the banned CPU",
			daemon: "irqbalance",
			ban: Watch{Pre: pre, Stop: "window",
				Samples: []Sample{{T: 0, Affinity: pre}}},
			clear:   Watch{Pre: pre, Stop: "window", Samples: []Sample{{T: 0, Affinity: pre}}},
			wantBan: math.NaN(), wantClear: 0,
		},
		{
			name:   "moved off, then back on before the watch ended",
			daemon: "numairqd",
			ban: Watch{Pre: pre, Stop: "quiet",
				Samples: []Sample{{T: 0, Affinity: pre}, {T: 1, Affinity: banned}, {T: 2, Affinity: pre}}},
			clear:   Watch{Pre: pre, Stop: "quiet", Samples: []Sample{{T: 0, Affinity: pre}}},
			wantBan: math.NaN(), wantClear: 0,
		},
	}
	same := func(a, b float64) bool { return (math.IsNaN(a) && math.IsNaN(b)) || math.Abs(a-b) < 1e-9 }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := BansRun{Daemon: tt.daemon, Banned: "5", Events: []BanEvent{{Rep: 1, Kind: "ban", Watch: tt.ban}, {Rep: 1, Kind: "clear", Watch: tt.clear}}}
			ban, clear, banNever, clearNever := BanTimes(r)
			if len(ban) != 1 || len(clear) != 1 || !same(ban[0], tt.wantBan) || !same(clear[0], tt.wantClear) {
				t.Errorf("BanTimes = ban %v clear %v, want %v and %v", ban, clear, tt.wantBan, tt.wantClear)
			}
			if math.IsNaN(tt.wantBan) != (banNever == 1) || math.IsNaN(tt.wantClear) != (clearNever == 1) {
				t.Errorf("never = %d, %d, want 1 where the time is NaN", banNever, clearNever)
			}
		})
	}
}

func TestMapAvoids(t *testing.T) {
	m := Map{"input.0": "4", "input.1": "6-7", "output.0": "0,2"}
	if !m.Avoids(fakesys.MustMask(t, "5")) || m.Avoids(fakesys.MustMask(t, "7")) || (Map{"input.0": ""}).Avoids(fakesys.MustMask(t, "5")) {
		t.Error("Avoids")
	}
	if got := m.CountOn(fakesys.MustMask(t, "2,4")); got != 2 {
		t.Errorf("CountOn = %d, want 2", got)
	}
	if s := Summarize([]float64{0.5, math.NaN(), 0.3}); s.N != 2 || !slices.Equal([]float64{s.Min, s.Max}, []float64{0.3, 0.5}) {
		t.Errorf("Summarize with a never: %+v", s)
	}
}
