package main

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/numairqd/numairqd/bench/measure"
)

// Layout of the %soft panels, in points: a bar's slot and a panel's
// height.
const (
	barSlot    = vg.Length(18)
	softPanelH = vg.Length(140)
)

var (
	boundRed  = color.RGBA{200, 0, 0, 255}
	boundBlue = color.RGBA{30, 60, 220, 255}
)

// writeTrafficChart draws one row per guest and one panel per state:
// a bar per vCPU, its height the vCPU's %soft, its colour the vCPU's
// NUMA distance from the NIC's node. It writes the load-balancing chart
// (writeBalanceChart) beside it, as balance.png.
func writeTrafficChart(path string, all []trafficResult) error {
	if len(all) > 0 {
		if err := writeBalanceChart(balancePNG(path), all[0].balance); err != nil {
			return err
		}
	}
	f, ok := trafficFigure(notSteady(all))
	if !ok {
		return nil
	}
	return f.save(path)
}

func trafficFigure(results []trafficResult) (figure, bool) {
	if len(results) == 0 {
		return figure{}, false
	}
	var s softScale
	for _, tr := range results {
		for i, f := range tr.figures {
			if tr.errs[i] == nil {
				s.add(f.CPUs, 0)
			}
		}
	}
	var fig figure
	for _, tr := range results {
		fig.rows = append(fig.rows, s.row(tr.run.Name+": "+shorten(tr.run.Title, 70), tr.run.States, tr.errs, func(i int) *plot.Plot {
			f := tr.figures[i]
			return s.panel(fmt.Sprintf("%s  max/mean %.2f", tr.run.States[i].Name, f.MaxOverMean), f.CPUs)
		}))
	}
	fig.legend = distLegend("%soft per vCPU, by distance from the NIC node:", s.dists)
	return fig, true
}

// writeBalanceChart draws one row per skewed run and one panel per
// state: a bar per vCPU (its %soft, coloured by NUMA distance from the
// first NIC's node) and dashed lines at the bound's busiest vCPU, by
// packets (red) and by the cost fit (blue).
func writeBalanceChart(path string, results []balanceResult) error {
	f, ok := balanceFigure(results)
	if !ok {
		return nil
	}
	return f.save(path)
}

func balanceFigure(results []balanceResult) (figure, bool) {
	var rows []balanceResult
	for _, br := range results {
		if br.run.Skew != "" && !br.run.Steady {
			rows = append(rows, br)
		}
	}
	if len(rows) == 0 {
		return figure{}, false
	}
	var s softScale
	for _, br := range rows {
		for i, f := range br.figures {
			if br.errs[i] == nil {
				s.add(f.CPUs, f.Bound*f.MeanSoft)
			}
		}
	}
	var fig figure
	for _, br := range rows {
		fig.rows = append(fig.rows, s.row(br.run.Name+": "+shorten(br.run.Title, 80), br.run.States, br.errs, func(i int) *plot.Plot {
			f := br.figures[i]
			p := s.panel(fmt.Sprintf("%s %.2f, bound %.2f", br.run.States[i].Name, f.MaxOverMean, f.Bound), f.CPUs)
			for _, b := range []struct {
				v   float64
				col color.Color
			}{{f.Bound, boundRed}, {f.FitBound, boundBlue}} {
				if !math.IsNaN(b.v) {
					p.Add(dashed(b.col, b.v*f.MeanSoft, len(f.CPUs)))
				}
			}
			return p
		}))
	}
	fig.legend = append(distLegend("%soft per vCPU by distance from the NIC node:", s.dists),
		legendEntry{text: "bound", thumb: dashed(boundRed, 0, 1), w: 2 * swatchW},
		legendEntry{text: "bound by cost fit", thumb: dashed(boundBlue, 0, 1), w: 2 * swatchW})
	return fig, true
}

// softScale is what every panel of a chart shares: the vCPUs' NUMA
// distances, the most vCPUs of a panel, and the top of the Y axis.
type softScale struct {
	dists []int
	cpus  int
	top   float64
}

// add takes a panel's vCPUs and any other value its Y axis must reach.
func (s *softScale) add(cpus []measure.CPULoad, also float64) {
	s.cpus = max(s.cpus, len(cpus))
	if !math.IsNaN(also) {
		s.top = max(s.top, also)
	}
	for _, c := range cpus {
		s.top = max(s.top, c.SoftPct)
		if c.Dist >= 0 && !slices.Contains(s.dists, c.Dist) {
			s.dists = append(s.dists, c.Dist)
			slices.Sort(s.dists)
		}
	}
}

// row is a panel per state (panel(i) for state i), or the state's
// "no data" when its figures could not be computed (errs[i]).
func (s softScale) row(heading string, states []measure.TrafficState, errs []error, panel func(i int) *plot.Plot) figureRow {
	r := figureRow{heading: heading, w: barSlot*vg.Length(s.cpus) + 40, h: softPanelH}
	for i, st := range states {
		if errs[i] != nil {
			r.add(noData(st.Name))
			continue
		}
		r.add(panel(i))
	}
	return r
}

// panel is a bar per vCPU, its height the vCPU's %soft, its colour the
// vCPU's NUMA distance (grey without one); every panel of the chart has
// room for s.cpus bars and the same Y axis.
func (s softScale) panel(title string, cpus []measure.CPULoad) *plot.Plot {
	p := newPanel(title)
	names := make([]string, max(s.cpus, 1))
	for k, c := range cpus {
		names[k] = fmt.Sprint(c.CPU)
		bar, _ := plotter.NewPolygon(plotter.XYs{{X: float64(k) - 0.4}, {X: float64(k) + 0.4}, {X: float64(k) + 0.4, Y: c.SoftPct}, {X: float64(k) - 0.4, Y: c.SoftPct}})
		bar.Color, bar.LineStyle.Width = grey, 0
		if c.Dist >= 0 {
			bar.Color = distColor(c.Dist, s.dists)
		}
		p.Add(bar)
	}
	p.NominalX(names...)
	p.X.Width = 0.5 // NominalX hides the axis line: keep it as the bars' base
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	top := math.Ceil(max(s.top, 1)/10) * 10
	p.Y.Min, p.Y.Max = 0, top
	p.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: top / 2, Label: fmt.Sprint(top / 2)}, {Value: top, Label: fmt.Sprint(top)}}
	return p
}

// noData is the panel of a state whose figures could not be computed.
func noData(state string) *plot.Plot {
	p := newPanel(state + ": no data")
	p.HideAxes()
	return p
}

// dashed is a dashed horizontal line at y across n bars.
func dashed(col color.Color, y float64, n int) *plotter.Line {
	l, _ := plotter.NewLine(plotter.XYs{{X: -0.5, Y: y}, {X: float64(n) - 0.5, Y: y}})
	l.Color, l.Width, l.Dashes = col, 1.5, []vg.Length{4, 3}
	return l
}
