package model

import (
	"sort"
	"strings"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	InputPerMTok  float64 `json:"input_per_mtok"`
	OutputPerMTok float64 `json:"output_per_mtok"`
}

// Prices are prices by model name.
type Prices map[string]Price

// Lookup finds the price of a model: its own name, or else the longest
// name in p that it starts with followed by "-" or "@" (a dated or
// versioned release, gpt-4o-2024-08-06 priced as gpt-4o).
func (p Prices) Lookup(name string) (Price, bool) {
	if pr, ok := p[name]; ok {
		return pr, true
	}
	names := make([]string, 0, len(p))
	for k := range p {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		return len(names[i]) > len(names[j]) || (len(names[i]) == len(names[j]) && names[i] < names[j])
	})
	for _, k := range names {
		if rest, ok := strings.CutPrefix(name, k); ok && rest != "" && (rest[0] == '-' || rest[0] == '@') {
			return p[k], true
		}
	}
	return Price{}, false
}

// Cost is the dollars in input and output tokens at p.
func (p Price) Cost(input, output int64) float64 {
	return (float64(input)*p.InputPerMTok + float64(output)*p.OutputPerMTok) / 1e6
}
