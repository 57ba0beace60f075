package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/retryscope/retryscope/model"
)

// DefaultPrices are list prices of common models in US dollars per million
// tokens (input, output), as published by their providers in 2025; spend
// is only as right as they are, so pass --prices with your own.
func DefaultPrices() model.Prices {
	return model.Prices{
		"gpt-4o":                   {InputPerMTok: 2.5, OutputPerMTok: 10},
		"gpt-4o-mini":              {InputPerMTok: 0.15, OutputPerMTok: 0.6},
		"gpt-4.1":                  {InputPerMTok: 2, OutputPerMTok: 8},
		"gpt-4.1-mini":             {InputPerMTok: 0.4, OutputPerMTok: 1.6},
		"o3-mini":                  {InputPerMTok: 1.1, OutputPerMTok: 4.4},
		"claude-sonnet-4":          {InputPerMTok: 3, OutputPerMTok: 15},
		"claude-opus-4":            {InputPerMTok: 15, OutputPerMTok: 75},
		"claude-3-5-sonnet":        {InputPerMTok: 3, OutputPerMTok: 15},
		"claude-3-5-haiku":         {InputPerMTok: 0.8, OutputPerMTok: 4},
		"claude-3-haiku":           {InputPerMTok: 0.25, OutputPerMTok: 1.25},
		"anthropic.claude-3-haiku": {InputPerMTok: 0.25, OutputPerMTok: 1.25},
	}
}

// maxPrice bounds a price per million tokens: far above any list price,
// and low enough that a day's spend stays a finite number.
const maxPrice = 1e6

func plausiblePrice(v float64) bool { return v >= 0 && v <= maxPrice }

// ReadPrices reads a price table from r (the file source names): a JSON
// object from model name to its prices in US dollars per million tokens,
//
//	{"gpt-4o": {"input_per_mtok": 2.5, "output_per_mtok": 10}}
//
// and lays it over DefaultPrices: its models are priced as it says, the
// others as by default. A model is priced by its own name or by the
// longest name it starts with before a "-" or "@" (gpt-4o-2024-08-06 as
// gpt-4o).
func ReadPrices(r io.Reader, source string) (model.Prices, error) {
	const want = `want {"model": {"input_per_mtok": N, "output_per_mtok": N}}`
	var file map[string]struct {
		In  *float64 `json:"input_per_mtok"`
		Out *float64 `json:"output_per_mtok"`
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("prices %s: %s: %w", source, want, err)
	}
	out := DefaultPrices()
	for name, p := range file {
		switch {
		case p.In == nil || p.Out == nil:
			return nil, fmt.Errorf("prices %s: %s: give both input_per_mtok and output_per_mtok", source, name)
		case !plausiblePrice(*p.In) || !plausiblePrice(*p.Out):
			return nil, fmt.Errorf("prices %s: %s: prices are USD per million tokens, from 0 to %g", source, name, maxPrice)
		}
		out[name] = model.Price{InputPerMTok: *p.In, OutputPerMTok: *p.Out}
	}
	return out, nil
}
