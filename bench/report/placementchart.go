package main

import (
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/numairqd/numairqd/bench/measure"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// panel is one grid of the chart: a device's queue IRQs (rows) on the
// guest's CPUs (columns) in one state.
type panel struct {
	title  string
	state  guestinfo.State
	dev    measure.Device
	banned cpumask.Mask
}

// cellSize is about a grid cell's side, in points: a tile adds room for
// the axes, and plot.Align shares out the rest.
const cellSize = vg.Length(11)

// writeChart draws rows of panels (one row per guest, one panel per
// state) with a legend, to path.
func writeChart(path string, rows [][]panel, dists []int) error {
	return placementFigure(rows, dists).save(path)
}

func placementFigure(rows [][]panel, dists []int) figure {
	var f figure
	for _, r := range rows {
		fr := figureRow{}
		for _, p := range r {
			g := newCells(p, dists)
			fr.add(g.plot())
			// Room for the queue names, the CPU ids and the title.
			fr.w = max(fr.w, cellSize*vg.Length(len(g.cpus))+32)
			fr.h = max(fr.h, cellSize*vg.Length(len(p.dev.Queues))+36)
		}
		f.rows = append(f.rows, fr)
	}
	f.legend = append(distLegend("Distance from device node:", dists),
		legendEntry{text: "one CPU of a multi-CPU mask", thumb: hatched{distColor(10, dists)}, w: swatchW},
		swatch("banned CPU", grey))
	return f
}

// cells is a panel's grid as a plot.Plotter: column k is the k-th
// online CPU, row r the r-th queue IRQ (the Y axis is inverted so that
// the first queue is on top).
type cells struct {
	p     panel
	cpus  []int
	dists []int
}

func newCells(p panel, dists []int) cells {
	cpus := slices.Clone(p.state.Online)
	slices.Sort(cpus)
	return cells{p: p, cpus: cpus, dists: dists}
}

func (g cells) plot() *plot.Plot {
	pl := newPanel(g.p.title)
	cols := make([]string, len(g.cpus))
	for k, c := range g.cpus {
		cols[k] = fmt.Sprint(c)
	}
	rows := make([]string, len(g.p.dev.Queues))
	for r, q := range g.p.dev.Queues {
		rows[r] = fmt.Sprintf("I%d", q.Queue)
		if q.Name[0] == 'o' {
			rows[r] = fmt.Sprintf("O%d", q.Queue)
		}
	}
	pl.Y.Scale = plot.InvertedScale{Normalizer: plot.LinearScale{}}
	pl.NominalX(cols...)
	pl.NominalY(rows...)
	pl.X.Padding, pl.Y.Padding = 0, 0
	pl.Add(g)
	return pl
}

func (g cells) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(len(g.cpus)) - 0.5, -0.5, float64(len(g.p.dev.Queues)) - 0.5
}

// Plot fills a cell where the IRQ's mask holds the CPU, coloured by the
// CPU's NUMA distance from the device's node; hatched when the mask
// holds more than one CPU; grey behind a banned CPU.
func (g cells) Plot(c draw.Canvas, pl *plot.Plot) {
	trX, trY := pl.Transforms(&c)
	t := measure.TopoOf(g.p.state)
	border := draw.LineStyle{Color: grid, Width: 0.5}
	for r, q := range g.p.dev.Queues {
		m, _ := cpumask.ParseList(q.IRQ.Affinity)
		for k, cpu := range g.cpus {
			x, y := float64(k), float64(r)
			rect := vg.Rectangle{Min: vg.Point{X: trX(x - 0.5), Y: trY(y + 0.5)}, Max: vg.Point{X: trX(x + 0.5), Y: trY(y - 0.5)}}
			var bg color.Color = color.White
			if g.p.banned.Contains(cpu) {
				bg = grey
			}
			fillRect(&c, rect, bg)
			if m.Contains(cpu) {
				col := distColor(t.CPUDist(g.p.dev.Node, cpu), g.dists)
				if m.Weight() > 1 {
					hatch(&c, rect, col)
				} else {
					fillRect(&c, rect, col)
				}
			}
			c.SetLineStyle(border)
			c.Stroke(rect.Path())
		}
	}
}

func fillRect(c *draw.Canvas, r vg.Rectangle, col color.Color) {
	c.SetColor(col)
	c.Fill(r.Path())
}
