package main

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The charts' text is Liberation Sans (gonum/plot embeds the Liberation
// fonts; its default is the serif).
func init() { plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"} }

// Layout of every chart, in points (96 dpi: 4/3 pixel a point).
const (
	figPad   = vg.Length(12) // around the chart and between panels
	fontSize = vg.Length(11)
	swatchW  = vg.Length(11) // a legend's colour square
)

var (
	grid = color.RGBA{210, 210, 210, 255}
	grey = color.RGBA{150, 150, 150, 255}
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

// figure is a chart of rows of panels, each row under an optional
// heading, with a legend along the bottom.
type figure struct {
	rows   []figureRow
	legend []legendEntry
}

// figureRow is one row of panels; each panel gets a w x h tile (title
// and axes included) and plot.Align gives the row's panels data areas
// of one size.
type figureRow struct {
	heading string
	panels  []*plot.Plot
	w, h    vg.Length
}

// add appends a panel, widening the row's tiles to fit its title.
func (r *figureRow) add(p *plot.Plot) {
	r.panels = append(r.panels, p)
	r.w = max(r.w, textStyle().Width(p.Title.Text))
}

// newPanel is a plot with the charts' title size.
func newPanel(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = fontSize
	return p
}

// legendEntry is a thumbnail and its text; an entry without a
// thumbnail is a label.
type legendEntry struct {
	text  string
	thumb plot.Thumbnailer
	w     vg.Length // the thumbnail's width
}

func textStyle() text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, fontSize), Handler: plot.DefaultTextHandler, YAlign: draw.YTop}
}

// legend is the plot.Legend that draws one entry.
func (e legendEntry) legend() plot.Legend {
	l := plot.NewLegend()
	l.Left, l.Top = true, true
	l.TextStyle.Font.Size = fontSize
	l.ThumbnailWidth = e.w
	if e.thumb == nil {
		l.Add(e.text)
	} else {
		l.Add(e.text, e.thumb)
	}
	return l
}

// size is the chart's width and height.
func (f figure) size() (w, h vg.Length) {
	for _, e := range f.legend {
		l := e.legend()
		w += l.Rectangle(draw.Canvas{}).Size().X + figPad
	}
	h = figPad
	for _, r := range f.rows {
		w = max(w, vg.Length(len(r.panels))*(r.w+figPad))
		if r.heading != "" {
			h += textStyle().Height(r.heading) + figPad/2
		}
		h += r.h + figPad
	}
	if len(f.legend) > 0 {
		h += legendHeight()
	}
	return w + figPad, h
}

// legendHeight is the legend's strip, under the panels.
func legendHeight() vg.Length { return textStyle().Height("0") + figPad }

// save draws the chart and writes it to path as a PNG.
func (f figure) save(path string) error {
	w, h := f.size()
	img := vgimg.New(w, h)
	c := draw.New(img)
	y := c.Max.Y - figPad
	for _, r := range f.rows {
		if r.heading != "" {
			sty := textStyle()
			c.FillText(sty, vg.Point{X: figPad, Y: y}, r.heading)
			y -= sty.Height(r.heading) + figPad/2
		}
		n := len(r.panels)
		row := draw.Crop(c, figPad, 0, 0, 0)
		row.Max.X = row.Min.X + vg.Length(n)*(r.w+figPad) - figPad
		row.Min.Y, row.Max.Y = y-r.h, y
		tiles := plot.Align([][]*plot.Plot{r.panels}, draw.Tiles{Rows: 1, Cols: n, PadX: figPad}, row)
		for i, p := range r.panels {
			p.Draw(tiles[0][i])
		}
		y -= r.h + figPad
	}
	x := c.Min.X + figPad
	for _, e := range f.legend {
		l := e.legend()
		lc := draw.Crop(c, x-c.Min.X, 0, 0, 0)
		lc.Max.Y = y
		l.Draw(lc)
		x += l.Rectangle(lc).Size().X + figPad
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(out); err != nil {
		out.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return out.Close()
}

// swatch is a legend entry's filled colour square (a polygon's
// thumbnail fills its whole box).
func swatch(s string, col color.Color) legendEntry {
	return legendEntry{text: s, thumb: &plotter.Polygon{Color: col}, w: swatchW}
}

// distLegend is the label and a swatch per NUMA distance.
func distLegend(label string, dists []int) []legendEntry {
	out := []legendEntry{{text: label}}
	for _, d := range dists {
		out = append(out, swatch(fmt.Sprint(d), distColor(d, dists)))
	}
	return out
}

// hatched is the thumbnail of a CPU that shares a mask.
type hatched struct{ col color.Color }

func (h hatched) Thumbnail(c *draw.Canvas) { hatch(c, c.Rectangle, h.col) }

// hatch strokes diagonals across r in col, clipped to r.
func hatch(c *draw.Canvas, r vg.Rectangle, col color.Color) {
	cell := draw.Canvas{Canvas: c.Canvas, Rectangle: r}
	w, h := r.Size().X, r.Size().Y
	step := vg.Length(4)
	var lines [][]vg.Point
	for d := -h; d < w; d += step {
		lines = append(lines, []vg.Point{{X: r.Min.X + d, Y: r.Min.Y}, {X: r.Min.X + d + h, Y: r.Max.Y}})
	}
	cell.StrokeLines(draw.LineStyle{Color: col, Width: step / 2}, cell.ClipLinesXY(lines...)...)
}

// shorten cuts s to n runes, with an ellipsis.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
