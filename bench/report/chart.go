package main

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"sort"

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

var (
	white = color.RGBA{255, 255, 255, 255}
	black = color.RGBA{0, 0, 0, 255}
	grid  = color.RGBA{210, 210, 210, 255}
	grey  = color.RGBA{150, 150, 150, 255}
)

// distColor maps a NUMA distance to a colour by its rank among the
// distances of the chart (dists, sorted): the nearest green, then light
// green, orange and red for the farthest.
func distColor(d int, dists []int) color.RGBA {
	ramp := []color.RGBA{{26, 150, 65, 255}, {166, 217, 106, 255}, {253, 174, 97, 255}, {215, 25, 28, 255}}
	rank := 0
	for i, x := range dists {
		if x <= d {
			rank = i
		}
	}
	if len(dists) > len(ramp) {
		rank = rank * (len(ramp) - 1) / (len(dists) - 1)
	}
	return ramp[min(rank, len(ramp)-1)]
}

// writeChart draws rows of panels (one row per guest, one panel per
// state) with a legend, to path.
func writeChart(path string, rows [][]panel, dists []int) error {
	const cell, scale, pad = 14, 2, 16
	labelW := textWidth("O.10", scale) + 6
	// Layout: every panel in a column gets the width of the widest.
	ncol := 0
	for _, r := range rows {
		ncol = max(ncol, len(r))
	}
	colW := make([]int, ncol)
	rowH := make([]int, len(rows))
	for i, r := range rows {
		for j, p := range r {
			w := labelW + cell*len(p.state.Online) + 4
			w = max(w, textWidth(p.title, scale)+labelW)
			colW[j] = max(colW[j], w)
			rowH[i] = max(rowH[i], 14+10+cell*len(p.dev.Queues)+14)
		}
	}
	width := pad
	for _, w := range colW {
		width += w + pad
	}
	height := pad
	for _, h := range rowH {
		height += h + pad
	}
	legendH := 40
	height += legendH
	legendW := pad + textWidth("DISTANCE FROM DEVICE NODE:", scale) + 8
	for _, d := range dists {
		legendW += cell + 4 + textWidth(itoa(d), scale) + 12
	}
	legendW += 2*(cell+4+12) + textWidth("ONE CPU OF A MULTI-CPU MASK", scale) + textWidth("BANNED CPU", scale) + pad
	width = max(width, legendW)
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	fill(img, 0, 0, width, height, white)
	y := pad
	for i, r := range rows {
		x := pad
		for j, p := range r {
			drawPanel(img, x, y, p, cell, scale, labelW, dists)
			x += colW[j] + pad
		}
		y += rowH[i] + pad
	}
	// Legend.
	x := pad
	ly := height - legendH + 8
	x = drawText(img, x, ly+2, scale, "DISTANCE FROM DEVICE NODE:", black) + 8
	for _, d := range dists {
		fill(img, x, ly, cell, cell, distColor(d, dists))
		x = drawText(img, x+cell+4, ly+2, scale, itoa(d), black) + 12
	}
	hatch(img, x, ly, cell, cell, distColor(10, dists))
	x = drawText(img, x+cell+4, ly+2, scale, "ONE CPU OF A MULTI-CPU MASK", black) + 12
	fill(img, x, ly, cell, cell, grey)
	drawText(img, x+cell+4, ly+2, scale, "BANNED CPU", black)
	return savePNG(path, img)
}

func savePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func drawPanel(img *image.RGBA, x, y int, p panel, cell, scale, labelW int, dists []int) {
	drawText(img, x, y, scale, p.title, black)
	y += 14
	t := measure.TopoOf(p.state)
	cpus := append([]int(nil), p.state.Online...)
	sort.Ints(cpus)
	gx := x + labelW
	for k, c := range cpus {
		drawText(img, gx+k*cell+3, y, scale, itoa(c), black)
	}
	y += 12
	for r, q := range p.dev.Queues {
		label := "I"
		if q.Name[0] == 'o' {
			label = "O"
		}
		drawText(img, x, y+r*cell+2, scale, label+itoa(q.Queue), black)
		m, _ := cpumask.ParseList(q.IRQ.Affinity)
		for k, c := range cpus {
			cx, cy := gx+k*cell, y+r*cell
			bg := white
			if p.banned.Contains(c) {
				bg = grey
			}
			fill(img, cx, cy, cell, cell, grid)
			fill(img, cx+1, cy+1, cell-1, cell-1, bg)
			if !m.Contains(c) {
				continue
			}
			col := distColor(t.CPUDist(p.dev.Node, c), dists)
			if m.Weight() > 1 {
				hatch(img, cx+1, cy+1, cell-1, cell-1, col)
			} else {
				fill(img, cx+1, cy+1, cell-1, cell-1, col)
			}
		}
	}
}

// hatch fills every other diagonal, for a CPU that shares a mask.
func hatch(img *image.RGBA, x, y, w, h int, c color.Color) {
	for i := 0; i < w; i++ {
		for j := 0; j < h; j++ {
			if (i+j)%4 < 2 {
				img.Set(x+i, y+j, c)
			}
		}
	}
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
