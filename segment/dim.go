package segment

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retryscope/retryscope/model"
)

// Kind is what a dimension slices by.
type Kind string

// The dimensions. Each reads one column of the requests table or one
// attribute of the request's anchor span (the outermost span standing for
// the logical request; requests.trace_id and requests.span_id). A missing
// value is the segment "(unset)".
const (
	// KindService is requests.service.
	KindService Kind = "service"
	// KindOperation is requests.operation, the anchor span's name
	// ("endpoint" is accepted as an alias).
	KindOperation Kind = "operation"
	// KindModel is requests.model, the model the first attempt asked for.
	KindModel Kind = "model"
	// KindRoute is requests.route, where the first attempt went.
	KindRoute Kind = "route"
	// KindRetryRoute is requests.final_route for retried requests (where
	// the last attempt went) and "(not retried)" for the rest.
	KindRetryRoute Kind = "retry_route"
	// KindTrigger is what started the retry path: the trigger of the first
	// failed attempt (requests.triggers[1]); for a request with no failed
	// attempt it is requests.final_trigger when set, else "none". So a
	// request that timed out once and then hit a 429 is a "timeout"
	// request: slicing by the first trigger groups requests by the event
	// that cost them the first attempt.
	KindTrigger Kind = "trigger"
	// KindRegion is the anchor span's cloud.region attribute, else its
	// resource's.
	KindRegion Kind = "region"
	// KindEnvironment is the resource attribute deployment.environment.name,
	// else deployment.environment (older semantic conventions), else the
	// same keys on the span itself.
	KindEnvironment Kind = "environment"
	// KindInputTokens buckets requests.input_tokens by DimOptions.TokenEdges.
	KindInputTokens Kind = "input_tokens"
	// KindOutputTokens buckets requests.output_tokens the same way.
	KindOutputTokens Kind = "output_tokens"
	// KindStream is "true" for streaming requests, else "false".
	KindStream Kind = "stream"
	// KindCache is the prompt-cache status read from the anchor span:
	// "hit" when the first of DimOptions.CacheKeys present is a number
	// above 0, "miss" when it is 0, "(unset)" when none is present.
	KindCache Kind = "cache"
	// KindOutcome is requests.outcome: ok or error.
	KindOutcome Kind = "outcome"
	// KindTime buckets requests.start_ns into UTC windows of Dim.Width
	// aligned on the Unix epoch, labelled by their start
	// ("2026-01-02T15:00:00Z").
	KindTime Kind = "time"
	// KindAttr is a span attribute of the anchor span, named by Dim.Name.
	KindAttr Kind = "attr"
	// KindResource is a resource attribute of the anchor span's resource,
	// named by Dim.Name.
	KindResource Kind = "resource"
)

// The labels of values that are not data.
const (
	// Unset is the value of a dimension the request does not carry.
	Unset = "(unset)"
	// Other is the value of every dimension of a rolled-up segment from
	// the level at which cohorts were pooled.
	Other = "(other)"
	// NotRetried is retry_route's value for requests with one attempt.
	NotRetried = "(not retried)"
)

// Default dimension settings.
var (
	// DefaultTokenEdges are the upper bounds of the token buckets 0-256,
	// 256-1k, 1k-4k, 4k-16k and 16k+ (k = 1024 in labels).
	DefaultTokenEdges = []int64{256, 1024, 4096, 16384}
	// DefaultCacheKeys are read in order for the cache dimension: the
	// OpenTelemetry GenAI convention, then the name OpenLLMetry uses.
	DefaultCacheKeys = []string{"gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens"}
)

// DefaultBucket is the time dimension's window when none is given.
const DefaultBucket = time.Hour

// Dim is one dimension to slice by.
type Dim struct {
	Kind Kind
	// Name is the attribute name for KindAttr and KindResource. It is data:
	// bound as a query parameter, never part of the SQL text.
	Name string
	// Width is KindTime's window (DefaultBucket when zero).
	Width time.Duration
	// Edges are the token kinds' bucket upper bounds, ascending
	// (DefaultTokenEdges when nil).
	Edges []int64
	// CacheKeys are KindCache's attributes (DefaultCacheKeys when nil).
	CacheKeys []string
}

// Key is the dimension's name in a segment's by map: the kind, or
// "attr:NAME" / "resource:NAME".
func (d Dim) Key() string {
	if d.Kind == KindAttr || d.Kind == KindResource {
		return string(d.Kind) + ":" + d.Name
	}
	return string(d.Kind)
}

// DimOptions are defaults for dimensions parsed from text.
type DimOptions struct {
	// Bucket is the time dimension's window unless the spec gives one
	// ("time:15m"). DefaultBucket when zero.
	Bucket time.Duration
	// TokenEdges are the token buckets' upper bounds unless the spec gives
	// them. DefaultTokenEdges when nil.
	TokenEdges []int64
	// CacheKeys are the cache dimension's attributes. DefaultCacheKeys
	// when nil.
	CacheKeys []string
}

var aliases = map[string]Kind{
	"endpoint":      KindOperation,
	"initial_route": KindRoute,
	"env":           KindEnvironment,
	"input":         KindInputTokens,
	"output":        KindOutputTokens,
	"bucket":        KindTime,
}

var plainKinds = []Kind{KindService, KindOperation, KindModel, KindRoute, KindRetryRoute,
	KindTrigger, KindRegion, KindEnvironment, KindInputTokens, KindOutputTokens, KindStream,
	KindCache, KindOutcome, KindTime}

// ParseDims reads a comma-separated list of dimensions, as --by takes
// them: "model,route", "trigger,time:15m", "attr:cloud.region",
// "input_tokens:256/1k/4k". An attribute name that itself contains a comma
// cannot be given this way; pass a Dim literal (or ParseDim).
func ParseDims(list string, opt DimOptions) ([]Dim, error) {
	var dims []Dim
	seen := make(map[string]bool)
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		d, err := ParseDim(s, opt)
		if err != nil {
			return nil, err
		}
		if seen[d.Key()] {
			return nil, fmt.Errorf("dimension %q given twice", d.Key())
		}
		seen[d.Key()] = true
		dims = append(dims, d)
	}
	return dims, nil
}

// ParseDim reads one dimension: a kind name (or alias), "attr:NAME",
// "resource:NAME", "time:WIDTH" (a Go duration or Nd for days), or
// "input_tokens:EDGES" / "output_tokens:EDGES" with EDGES as
// ParseTokenEdges reads them, '/' or ',' separated. Attribute names are
// taken verbatim after the colon, spaces included.
func ParseDim(s string, opt DimOptions) (Dim, error) {
	head, arg, hasArg := strings.Cut(s, ":")
	head = strings.ToLower(strings.TrimSpace(head))
	kind := Kind(head)
	if k, ok := aliases[head]; ok {
		kind = k
	}
	d := Dim{Kind: kind, Width: opt.Bucket, Edges: opt.TokenEdges, CacheKeys: opt.CacheKeys}
	switch {
	case kind == KindAttr || kind == KindResource:
		if arg == "" {
			return Dim{}, fmt.Errorf("dimension %q needs an attribute name, e.g. %s:cloud.region", s, kind)
		}
		d.Name = arg
	case kind == KindTime && hasArg:
		w, err := ParseWidth(arg)
		if err != nil {
			return Dim{}, fmt.Errorf("dimension %q: %w", s, err)
		}
		d.Width = w
	case (kind == KindInputTokens || kind == KindOutputTokens) && hasArg:
		edges, err := ParseTokenEdges(strings.ReplaceAll(arg, "/", ","))
		if err != nil {
			return Dim{}, fmt.Errorf("dimension %q: %w", s, err)
		}
		d.Edges = edges
	case hasArg:
		return Dim{}, fmt.Errorf("dimension %q takes no argument", s)
	case !slices.Contains(plainKinds, kind):
		return Dim{}, fmt.Errorf("unknown dimension %q (want one of %s, attr:NAME, resource:NAME)", s, kindList())
	}
	return d.withDefaults(), nil
}

// Kinds returns the dimension kinds that take no name, in the order
// docs/report.md, "report" lists them (Dimensions); KindAttr and KindResource
// take one.
func Kinds() []Kind { return slices.Clone(plainKinds) }

// KindNames are the names of Kinds, as --by takes them.
func KindNames() []string {
	names := make([]string, len(plainKinds))
	for i, k := range plainKinds {
		names[i] = string(k)
	}
	return names
}

func kindList() string {
	names := make([]string, len(plainKinds))
	for i, k := range plainKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

func (d Dim) withDefaults() Dim {
	if d.Width <= 0 {
		d.Width = DefaultBucket
	}
	if d.Edges == nil {
		d.Edges = DefaultTokenEdges
	}
	if d.CacheKeys == nil {
		d.CacheKeys = DefaultCacheKeys
	}
	return d
}

func (d Dim) validate() error {
	switch {
	case d.Kind == KindAttr || d.Kind == KindResource:
		if d.Name == "" {
			return fmt.Errorf("dimension %s needs an attribute name", d.Kind)
		}
	case !slices.Contains(plainKinds, d.Kind):
		return fmt.Errorf("unknown dimension %q", d.Kind)
	}
	if d.Kind == KindTime && d.Width < time.Millisecond {
		return fmt.Errorf("time bucket %s is shorter than 1ms", d.Width)
	}
	for i, e := range d.Edges {
		if e <= 0 || (i > 0 && e <= d.Edges[i-1]) {
			return fmt.Errorf("token bucket edges %v must be positive and ascending", d.Edges)
		}
	}
	return nil
}

// MaxWidth is the widest time bucket: a year.
const MaxWidth = 366 * 24 * time.Hour

// ParseWidth reads a time bucket width: a Go duration ("15m", "1h") or a
// whole number of days ("1d", "7d").
func ParseWidth(s string) (time.Duration, error) {
	w, ok := model.ParseSpan(s)
	if !ok || w < time.Millisecond || w > MaxWidth {
		return 0, fmt.Errorf("bad bucket width %q (want 1ms to %s, e.g. 15m, 1h, 1d)", strings.TrimSpace(s), model.FormatDuration(MaxWidth))
	}
	return w, nil
}

// ParseTokenEdges reads token bucket edges, either as the upper bounds
// ("256,1k,4k,16k") or as the buckets themselves
// ("0-256,256-1k,1k-4k,4k-16k,16k+"). k means 1024 and M 1024². The
// result is the ascending upper bounds; the last bucket is open-ended.
func ParseTokenEdges(s string) ([]int64, error) {
	var edges []int64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSuffix(strings.TrimSpace(part), "+")
		for _, num := range strings.Split(part, "-") {
			n, err := parseTokens(num)
			if err != nil {
				return nil, fmt.Errorf("bad token bucket %q: %w", part, err)
			}
			if n > 0 && !slices.Contains(edges, n) {
				edges = append(edges, n)
			}
		}
	}
	if len(edges) == 0 {
		return nil, fmt.Errorf("no token bucket edges in %q", s)
	}
	if !slices.IsSorted(edges) {
		return nil, fmt.Errorf("token bucket edges %q are not ascending", s)
	}
	return edges, nil
}

func parseTokens(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "k") || strings.HasSuffix(s, "K"):
		mult, s = 1024, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1024*1024, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a token count", s)
	}
	return n * mult, nil
}

func formatTokens(n int64) string {
	switch {
	case n >= 1024*1024 && n%(1024*1024) == 0:
		return strconv.FormatInt(n/(1024*1024), 10) + "M"
	case n >= 1024 && n%1024 == 0:
		return strconv.FormatInt(n/1024, 10) + "k"
	}
	return strconv.FormatInt(n, 10)
}

// TokenLabels returns the bucket labels for edges: "0-256", "256-1k", ...,
// "16k+". A request with t tokens falls in the first bucket whose upper
// bound exceeds t.
func TokenLabels(edges []int64) []string {
	labels := make([]string, 0, len(edges)+1)
	lo := int64(0)
	for _, e := range edges {
		labels = append(labels, formatTokens(lo)+"-"+formatTokens(e))
		lo = e
	}
	return append(labels, formatTokens(lo)+"+")
}

// Filter keeps the requests whose value of Dim is one of Values (or, with
// Exclude, none of them). Values are compared with the labels segments
// show, e.g. "1k-4k" for a token bucket or "(unset)".
type Filter struct {
	Dim     Dim
	Values  []string
	Exclude bool
}

// ParseFilter reads a --where filter: "DIM=VALUE[|VALUE...]" or
// "DIM!=VALUE[|VALUE...]", with DIM as ParseDim reads it. For attr: and
// resource: dimensions the attribute name runs to the last '=' (or '!=').
func ParseFilter(s string, opt DimOptions) (Filter, error) {
	i := strings.LastIndex(s, "=")
	if i <= 0 {
		return Filter{}, fmt.Errorf("bad filter %q (want DIM=VALUE or DIM!=VALUE, e.g. model=gpt-4o)", s)
	}
	lhs, rhs := s[:i], s[i+1:]
	var f Filter
	if strings.HasSuffix(lhs, "!") {
		lhs, f.Exclude = lhs[:len(lhs)-1], true
	}
	d, err := ParseDim(lhs, opt)
	if err != nil {
		return Filter{}, fmt.Errorf("filter %q: %w", s, err)
	}
	f.Dim = d
	f.Values = strings.Split(rhs, "|")
	return f, nil
}
