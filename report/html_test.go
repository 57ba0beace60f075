package report

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	stdhtml "html"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/retryscope/retryscope/baseline"
	"github.com/retryscope/retryscope/segment"
)

// The page is one file: no scripts, no stylesheets or images from
// elsewhere, every chart inline.
func TestPageIsSelfContained(t *testing.T) {
	html := []byte(render(t, sampleReport(t), "html"))
	// The latency distribution, load over time and the storm timeline at
	// least; the added latency and the tail by segment where data allows.
	if n := bytes.Count(html, []byte(`src="data:image/svg`)); n < 3 {
		t.Errorf("%d inline charts, want at least 3 (latency, load, storm)", n)
	}
	for _, bad := range []string{"<script", "<link", "@import", `src="http`, `href="http`, "url(http"} {
		if bytes.Contains(html, []byte(bad)) {
			t.Errorf("page contains %q: it would fetch from elsewhere", bad)
		}
	}
	if os.Getenv("HTMLREPORT_OUT") != "" {
		os.WriteFile(os.Getenv("HTMLREPORT_OUT"), html, 0o644)
	}
}

var update = flag.Bool("update", false, "rewrite docs/report.png and docs/report-chart.png from what TestPageRendersInChromium shows")

// viewport is the browser window the page is checked in: a laptop screen.
const viewportW, viewportH = 1280, 900

// TestPageRendersInChromium opens the bundled sample's page in headless
// Chromium as a reader would: no console errors and no network request (a
// proxy that refuses everything would log each one); the headline, the
// findings and the first chart within the first screen; every chart
// beside the table it draws or, when the table leaves no room, right
// above it. With -update it writes the
// screenshots docs/report.md shows: the top of the default page and the
// capacity section's charts of the --full page.
func TestPageRendersInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed; .ci/run installs Debian's chromium package")
		}
		t.Skip("chromium not installed (apt-get install chromium)")
	}
	st := sampleStore(t)
	dir := t.TempDir()
	pages := map[string]string{}
	for name, full := range map[string]bool{"default": false, "full": true} {
		opt := commandOptions(t)
		opt.Source, opt.Full = "retryscope.duckdb", full
		rep, err := Build(context.Background(), st, opt)
		if err != nil {
			t.Fatal(err)
		}
		pages[name] = filepath.Join(dir, name+".html")
		os.WriteFile(pages[name], []byte(render(t, rep, "html")), 0o644)
	}
	b := browser{t: t, path: chromium, dir: dir}

	top := b.measure(pages["default"])
	if len(top.Sections) < 2 || top.Sections[0].Title != "Headline" || !strings.HasPrefix(top.Sections[1].Title, "Findings") {
		t.Errorf("the page starts with %v, want the headline, then the findings", top.Sections)
	}
	first := top.firstChart()
	switch {
	case first == nil:
		t.Error("the default page has no chart")
	case first.Bottom > viewportH:
		t.Errorf("the first chart (%s) ends %.0f px down, below the first screen (%d px)", first.Title, first.Bottom, viewportH)
	}
	full := b.measure(pages["full"])
	for _, m := range []measured{top, full} {
		for _, s := range m.Sections {
			if c, tab := s.Column, s.Table; len(s.Charts) > 0 {
				beside := math.Abs(c.Top-tab.Top) < 40 && c.Left >= tab.Right
				above := c.Bottom <= tab.Top && tab.Top-c.Bottom < 40
				if !beside && !above {
					t.Errorf("the charts of %q (%.0f-%.0f, left %.0f) are neither beside nor right above the table (%.0f-%.0f, right %.0f)",
						s.Title, c.Top, c.Bottom, c.Left, tab.Top, tab.Bottom, tab.Right)
				}
			}
		}
	}
	if n := full.charts(); n < 4 {
		t.Errorf("the --full page shows %d charts, want at least 4 (latency, load, storm, tail)", n)
	}

	shot := b.screenshot(pages["default"], viewportH)
	capacity := full.section("Capacity")
	if capacity == nil || len(capacity.Charts) == 0 {
		t.Fatal("the --full page has no capacity section with charts")
	}
	charts := capacity.Charts[0].rect
	for _, c := range capacity.Charts[1:] {
		charts.Bottom = c.Bottom
	}
	chartShot := crop(t, b.screenshot(pages["full"], int(math.Ceil(charts.Bottom))+16), charts)
	if *update {
		os.WriteFile("../docs/report.png", shot, 0o644)
		os.WriteFile("../docs/report-chart.png", chartShot, 0o644)
	}
}

// browser runs headless Chromium on pages, each run with a fresh profile.
type browser struct {
	t         *testing.T
	path, dir string
	runs      int
}

// run opens url with args and returns what Chromium logged, failing the
// test on a console error or an attempted network request.
func (b *browser) run(url string, height int, args ...string) string {
	b.t.Helper()
	b.runs++
	args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--force-device-scale-factor=1", fmt.Sprintf("--user-data-dir=%s/profile%d", b.dir, b.runs),
		"--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>", "--enable-logging=stderr", "--v=0",
		fmt.Sprintf("--window-size=%d,%d", viewportW, height)}, args...)
	cmd := exec.Command(b.path, append(args, url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	if m := regexp.MustCompile(`(?m)^.*(CONSOLE|Uncaught|ERR_PROXY|net::ERR_).*$`).FindAllString(stderr.String(), -1); len(m) > 0 {
		b.t.Errorf("console errors or network requests:\n%s", strings.Join(m, "\n"))
	}
	return stdout.String()
}

// screenshot is the top height pixels of page, as PNG.
func (b *browser) screenshot(page string, height int) []byte {
	b.t.Helper()
	shot := filepath.Join(b.dir, fmt.Sprintf("shot%d.png", b.runs+1))
	b.run("file://"+page, height, "--screenshot="+shot)
	data, err := os.ReadFile(shot)
	if err != nil || len(data) < 10_000 {
		b.t.Fatalf("no screenshot written: %v", err)
	}
	return data
}

// rect is an element's box in CSS pixels from the top left of the page.
type rect struct{ Top, Bottom, Left, Right float64 }

// measured is where a page's sections and charts were laid out.
type measured struct{ Sections []shownSection }

// shownSection is a table's title, its box, and its charts' and theirs
// together (Column).
type shownSection struct {
	Title  string
	Table  rect
	Column rect
	Charts []shownChart
}

// shownChart is a chart's title (its image's alt text) and its box.
type shownChart struct {
	Title string
	rect
}

func (m measured) firstChart() *shownChart {
	for i := range m.Sections {
		if len(m.Sections[i].Charts) > 0 {
			return &m.Sections[i].Charts[0]
		}
	}
	return nil
}

func (m measured) charts() int {
	n := 0
	for _, s := range m.Sections {
		n += len(s.Charts)
	}
	return n
}

func (m measured) section(prefix string) *shownSection {
	for i := range m.Sections {
		if strings.HasPrefix(m.Sections[i].Title, prefix) {
			return &m.Sections[i]
		}
	}
	return nil
}

// measureScript reads the layout into the document's title, which
// --dump-dom prints: per h2, the box of the table under it, of the column
// of charts beside it and of each chart.
const measureScript = `<script>
const box = e => { const r = e.getBoundingClientRect(); return {Top: r.top + scrollY, Bottom: r.bottom + scrollY, Left: r.left, Right: r.right}; };
document.title = JSON.stringify({Sections: [...document.querySelectorAll("h2")].map(h => {
  const next = h.nextElementSibling, tables = next.querySelector(".tables") || next, column = next.querySelector(".charts") || next;
  return {Title: h.textContent, Table: box(tables), Column: box(column),
    Charts: [...next.querySelectorAll("figure")].map(f => ({Title: f.querySelector("img").alt, ...box(f)}))};
})});
</script>`

// measure lays page out in the viewport and returns where its parts went;
// the page is opened with a script added, so this run alone runs one.
func (b *browser) measure(page string) measured {
	b.t.Helper()
	html, err := os.ReadFile(page)
	if err != nil {
		b.t.Fatal(err)
	}
	probe := strings.TrimSuffix(page, ".html") + "-measure.html"
	os.WriteFile(probe, bytes.Replace(html, []byte("</body>"), []byte(measureScript+"</body>"), 1), 0o644)
	dom := b.run("file://"+probe, viewportH, "--dump-dom")
	title := regexp.MustCompile(`(?s)<title>(.*?)</title>`).FindStringSubmatch(dom)
	var m measured
	if title == nil || json.Unmarshal([]byte(stdhtml.UnescapeString(title[1])), &m) != nil {
		b.t.Fatalf("no layout read from the page:\n%.2000s", dom)
	}
	return m
}

// crop cuts r, widened by a margin, out of a PNG screenshot.
func crop(t *testing.T, shot []byte, r rect) []byte {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	const margin = 8
	box := image.Rect(int(r.Left)-margin, int(r.Top)-margin, int(math.Ceil(r.Right))+margin, int(math.Ceil(r.Bottom))+margin).Intersect(img.Bounds())
	sub := img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(box)
	var out bytes.Buffer
	if err := png.Encode(&out, sub); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// commandOptions are the options of "retryscope report" without flags:
// baselines of the healthy kind, segments by trigger of at least
// DefaultMinCohort requests, the retried ones' p99 first.
func commandOptions(t *testing.T) Options {
	t.Helper()
	by, err := segment.ParseDims("trigger", segment.DimOptions{Bucket: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	sort, err := segment.ParseSort("retried_p99")
	if err != nil {
		t.Fatal(err)
	}
	return Options{Baseline: baseline.KindHealthy, Segments: segment.Spec{By: by, MinCohort: DefaultMinCohort,
		Sort: sort, BaselineKind: baseline.KindHealthy}}
}

// The charts' samples are kept for an HTML report only: the HTML report
// draws the latency distribution, and the JSON report is the same with or
// without them.
func TestChartsOnlyForHTML(t *testing.T) {
	ctx := context.Background()
	st := sampleStore(t)
	opt := commandOptions(t)
	opt.Source = "sample.duckdb"
	with, err := Build(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.NoCharts = true
	without, err := Build(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(render(t, with, "html"), "Latency distribution") {
		t.Error("the HTML report has no latency distribution")
	}
	if len(without.samples) != 0 || len(with.samples) == 0 {
		t.Fatalf("%d samples for JSON, %d for HTML; want none and some", len(without.samples), len(with.samples))
	}
	if render(t, with, "json") != render(t, without, "json") {
		t.Error("the JSON report differs with the charts' samples kept")
	}
}
