package main

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/numairqd/numairqd/bench/measure"
	"github.com/numairqd/numairqd/test/e2e/guestinfo"
)

// guest is a 4-CPU guest, CPUs 0-1 on node 0 and 2-3 on node 1, with a
// virtio-net on node 0 whose queue pair k is on aff[k].
func guest(aff ...string) guestinfo.State {
	s := guestinfo.State{
		Online: []int{0, 1, 2, 3},
		Nodes: []guestinfo.Node{
			{ID: 0, CPUs: []int{0, 1}, Distance: []int{10, 20}},
			{ID: 1, CPUs: []int{2, 3}, Distance: []int{20, 10}},
		},
		PCI: []guestinfo.PCIDevice{{Address: "0000:41:00.0", Driver: "virtio-pci", NUMANode: 0, Children: []string{"virtio0"}}},
	}
	for k, a := range aff {
		s.IRQs = append(s.IRQs,
			guestinfo.IRQ{Number: 27 + 2*k, Actions: []string{fmt.Sprintf("virtio0-input.%d", k)}, Affinity: a},
			guestinfo.IRQ{Number: 28 + 2*k, Actions: []string{fmt.Sprintf("virtio0-output.%d", k)}, Affinity: a})
	}
	return s
}

// window is a 10 s traffic window of the guest: rx queue k fired
// 1000 times on CPU on[k], and CPU c spent soft[c] of 1000 ticks in
// softirq.
func window(name string, soft [4]uint64, on ...int) measure.TrafficState {
	sample := func(up float64, soft [4]uint64, n uint64) guestinfo.LoadSample {
		s := guestinfo.LoadSample{UptimeS: up, IRQCPUs: []int{0, 1, 2, 3}, Net: &guestinfo.NetCounts{RxPackets: uint64(up * 100)}}
		for k, c := range on {
			counts := make([]uint64, 4)
			counts[c] = n
			s.IRQs = append(s.IRQs, guestinfo.IRQCounts{Number: 27 + 2*k, Actions: []string{fmt.Sprintf("virtio0-input.%d", k)}, Counts: counts})
		}
		for c := range 4 {
			s.CPUs = append(s.CPUs, guestinfo.CPUTicks{CPU: c, SoftIRQ: soft[c], Idle: uint64(up*100) - soft[c]})
		}
		return s
	}
	aff := make([]string, len(on))
	for k, c := range on {
		aff[k] = fmt.Sprint(c)
	}
	return measure.TrafficState{Name: name, Before: guest(aff...), After: guest(aff...),
		Samples: []guestinfo.LoadSample{sample(10, [4]uint64{}, 0), sample(20, soft, 1000)}}
}

// TestCharts runs the report on a small synthetic raw.json and checks
// that every chart is a PNG of the size its layout asks for, with the
// distance colours of its cells or bars in it.
func TestCharts(t *testing.T) {
	even := measure.TrafficRun{Name: "numa2", Title: "2 nodes x 2 vCPUs", PCI: "0000:41:00.0", Enabled: 2, Flows: 8, Rate: 1000, WarmupS: 25,
		States: []measure.TrafficState{
			window("driver", [4]uint64{300, 0, 300, 0}, 0, 2),
			window("irqbalance", [4]uint64{0, 0, 500, 0}, 2, 2),
			window("count", [4]uint64{300, 300, 0, 0}, 0, 1),
		}}
	skewed := even
	skewed.Name, skewed.Skew = "elephants", "one flow 3x as hot"
	raw := measure.Raw{
		Meta: measure.Meta{Command: "bench/run.sh"},
		Placement: []measure.PlacementRun{{Name: "numa2", Title: "2 nodes", Banned: "3",
			Start: guest("0-1", "2"), Irqbalance: guest("2", "2"), Reset: guest("0-1", "2"), Numairqd: guest("0", "1")}},
		Traffic: []measure.TrafficRun{even, skewed},
	}
	dir := t.TempDir()
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	rawPath := filepath.Join(dir, "raw.json")
	if err := os.WriteFile(rawPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(options{raw: rawPath, out: filepath.Join(dir, "RESULTS.md"), png: filepath.Join(dir, "placement.png"), trafficPNG: filepath.Join(dir, "traffic.png")}); err != nil {
		t.Fatal(err)
	}

	rows, dists := (&writer{}).placement(raw.Placement)
	results := trafficResults(raw.Traffic)
	tf, _ := trafficFigure(notSteady(results))
	bf, ok := balanceFigure(results[0].balance)
	if !ok {
		t.Fatal("no balance chart for a skewed run")
	}
	for _, c := range []struct {
		file string
		fig  figure
	}{
		{"placement.png", placementFigure(rows, dists)},
		{"traffic.png", tf},
		{"balance.png", bf},
	} {
		t.Run(c.file, func(t *testing.T) {
			img := decode(t, filepath.Join(dir, c.file))
			w, h := c.fig.size()
			if got, want := img.Bounds().Size(), (image.Point{X: pixels(w), Y: pixels(h)}); got != want {
				t.Errorf("size %v, want %v", got, want)
			}
			if got := img.Bounds().Size(); got.X < 300 || got.Y < 150 {
				t.Errorf("size %v: too small for its panels", got)
			}
			// The panels, above the legend: cells or bars at both
			// distances, text and background.
			colours := map[color.RGBA]bool{}
			for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y-pixels(legendHeight()+figPad); y++ {
				for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
					colours[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)] = true
				}
			}
			for _, want := range []color.RGBA{distColor(10, dists), distColor(20, dists), {0, 0, 0, 255}, {255, 255, 255, 255}} {
				if !colours[want] {
					t.Errorf("no pixel of colour %v (%d colours)", want, len(colours))
				}
			}
		})
	}
}

// TestChartsWithoutData: without traffic runs, or skewed ones, there is
// no traffic or balance chart.
func TestChartsWithoutData(t *testing.T) {
	dir := t.TempDir()
	steady := trafficResult{run: measure.TrafficRun{Name: "steady", Steady: true}, balance: []balanceResult{{run: measure.TrafficRun{Steady: true, Skew: "even"}}}}
	if err := writeTrafficChart(filepath.Join(dir, "traffic.png"), []trafficResult{steady}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("wrote %v", ents)
	}
}

func decode(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// pixels is l at the PNG canvas's resolution, rounded as vgimg does.
func pixels(l vg.Length) int { return int(math.Round(l.Dots(vgimg.DefaultDPI))) }
