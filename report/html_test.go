package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
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

// Headless Chromium renders the page with no console errors and no
// network request (a proxy that refuses everything would log each one).
func TestPageRendersInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed; .ci/run installs Debian's chromium package")
		}
		t.Skip("chromium not installed (apt-get install chromium)")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	os.WriteFile(page, []byte(render(t, sampleReport(t), "html")), 0o644)
	shot := filepath.Join(dir, "shot.png")
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
		"--enable-logging=stderr", "--v=0", "--window-size=1100,2600", "--screenshot="+shot, "file://"+page)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	log := string(out)
	if m := regexp.MustCompile(`(?m)^.*(CONSOLE|Uncaught|ERR_PROXY|net::ERR_).*$`).FindAllString(log, -1); len(m) > 0 {
		t.Errorf("console errors or network requests:\n%s", strings.Join(m, "\n"))
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10_000 {
		t.Errorf("no screenshot written: %v\n%s", err, log)
	}
	if keep := os.Getenv("HTMLREPORT_SHOT"); keep != "" {
		data, _ := os.ReadFile(shot)
		os.WriteFile(keep, data, 0o644)
	}
}

// The charts' samples are kept for an HTML report only: the command's
// HTML report draws the latency distribution, and its JSON report is the
// same with or without them.
func TestChartsOnlyForHTML(t *testing.T) {
	ctx := context.Background()
	st := sampleStore(t)
	flags := map[string]*Flags{}
	out := map[string]string{}
	for _, format := range []string{"html", "json"} {
		f := &Flags{}
		fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
		f.Register(fs, "output")
		if err := fs.Parse([]string{"--format", format}); err != nil || f.Check() != nil {
			t.Fatalf("--format %s: %v %v", format, err, f.Check())
		}
		var b bytes.Buffer
		if err := f.Write(ctx, st, &b, "sample.duckdb", false); err != nil {
			t.Fatal(err)
		}
		flags[format], out[format] = f, b.String()
	}
	if !strings.Contains(out["html"], "Latency distribution") {
		t.Error("the command's HTML report has no latency distribution")
	}
	opt := flags["json"].opt
	without, err := Build(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.noCharts = false
	with, err := Build(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(without.samples) != 0 || len(with.samples) == 0 {
		t.Fatalf("%d samples for JSON, %d for HTML; want none and some", len(without.samples), len(with.samples))
	}
	if got := render(t, with, "json"); got != out["json"] {
		t.Error("the JSON report differs with the charts' samples kept")
	}
}
