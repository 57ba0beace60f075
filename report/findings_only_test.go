package report

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
)

// TestFindingsOnly: asked for the findings alone, JSON holds the schema,
// the window and the findings, and the other formats the findings table
// alone, a row per finding.
func TestFindingsOnly(t *testing.T) {
	rep := sampleReport(t)
	rep.settings.findings = true
	if len(rep.Findings) == 0 {
		t.Fatal("the sample should give a finding (nested retry loops)")
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(render(t, rep, "json")), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc) != 3 || doc["findings"] == nil || doc["schema"] == nil || doc["window"] == nil {
		t.Errorf("findings-only JSON has keys %v, want schema, window, findings", keysOf(doc))
	}
	records, err := csv.NewReader(strings.NewReader(render(t, rep, "csv"))).ReadAll()
	if err != nil || len(records) != len(rep.Findings)+1 || records[0][1] != "kind" {
		t.Errorf("findings-only CSV: %v %v", records, err)
	}
	if text := render(t, rep, "table"); strings.Contains(text, "Workload") || !strings.Contains(text, rep.Findings[0].Kind) {
		t.Errorf("findings-only text shows more or less than the findings:\n%s", text)
	}
}

func keysOf(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
