package report

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/retryscope/retryscope/analysis"
	"github.com/retryscope/retryscope/ingest"
	"github.com/retryscope/retryscope/internal/testkit"
	"github.com/retryscope/retryscope/rebuild"
)

// TestAWSThrottlingFixture is issue 29's acceptance 3, on the fixture
// testdata/fixtures/aws-sdk-go-v2-dynamodb-throttling (the AWS SDK for Go
// v2's standard retryer as its documentation describes it, against a
// DynamoDB table that throttles with HTTP 400 and ThrottlingException):
// no finding tells the client to stop retrying those 400s; every failed
// request's outcome_detail is what ended its loop in the truth (the quota
// running out: retry_budget; three attempts: attempt_cap; a malformed
// write: not_retryable), and the workload's outcome counts add up to the
// truth's.
func TestAWSThrottlingFixture(t *testing.T) {
	var fx testkit.Fixture
	for _, f := range testkit.Fixtures(t) {
		if f.Name == "aws-sdk-go-v2-dynamodb-throttling" {
			fx = f
		}
	}
	if fx.Name == "" {
		t.Fatal("no fixture aws-sdk-go-v2-dynamodb-throttling")
	}
	want := testkit.ReadExpected(t, fx)
	st := testkit.Open(t)
	ctx := context.Background()
	if _, err := ingest.Run(ctx, st, []string{filepath.Clean(fx.Traces)}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := rebuild.Rebuild(ctx, st); err != nil {
		t.Fatal(err)
	}
	rep, err := Build(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Kind == "retry_on_client_error" {
			t.Errorf("retry_on_client_error on %s: %s", analysis.SegmentName(f.Segment), f.Problem)
		}
	}
	details := map[string]string{}
	rows, err := st.QueryText(ctx, `SELECT request_id, coalesce(outcome_detail, '') FROM requests`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, d string
		if err := rows.Scan(&id, &d); err != nil {
			t.Fatal(err)
		}
		details[id] = d
	}
	rows.Close()
	byReason := map[string]int{}
	for _, r := range want.Requests {
		byReason[r.Exhausted]++
		if got := details[r.Key]; got != r.Exhausted {
			t.Errorf("%s (%d attempts, %s): outcome_detail %q, truth %q", r.Key, r.Attempts, r.Outcome, got, r.Exhausted)
		}
	}
	o := rep.Workload.Outcomes
	t.Logf("truth: %d quota stops, %d at the cap, %d not retryable; report: %d, %d, %d; findings %d",
		byReason["retry_budget"], byReason["attempt_cap"], byReason["not_retryable"], o.RetryBudget, o.AttemptCap, o.NotRetryable, len(rep.Findings))
	if byReason["retry_budget"] < 50 || byReason["attempt_cap"] < 10 || byReason["not_retryable"] < 5 {
		t.Fatalf("weak fixture: %v", byReason)
	}
	if o.RetryBudget != byReason["retry_budget"] || o.AttemptCap != byReason["attempt_cap"] || o.NotRetryable != byReason["not_retryable"] {
		t.Errorf("outcomes %+v, truth %v", o, byReason)
	}
}
