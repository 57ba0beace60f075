package htmlreport_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/htmlreport"
	"github.com/retryscope/retryscope/internal/storetest"
	"github.com/retryscope/retryscope/rebuild"
)

func samplePage(t *testing.T) []byte {
	t.Helper()
	st := storetest.Open(t)
	ctx := context.Background()
	if _, err := ingest.Run(ctx, st, []string{"../../testdata/sample/traces.jsonl"}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := rebuild.Rebuild(ctx, st); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	page := htmlreport.Page{Title: "retryscope report", Subtitle: "sample", Tables: []htmlreport.Table{{
		Title: "Workload", Header: []string{"measure", "value"}, Numeric: []bool{false, true},
		Rows: [][]string{{"logical requests", "300"}},
	}}}
	if err := htmlreport.Write(ctx, &buf, st, page); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The page is one file: no scripts, no stylesheets or images from
// elsewhere, every chart inline.
func TestPageIsSelfContained(t *testing.T) {
	html := samplePage(t)
	// The sample is too small for a per-operation tail, so three charts.
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
	os.WriteFile(page, samplePage(t), 0o644)
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
