// Package analysis measures what the segments and baselines do not: what
// each further attempt buys (the marginal yield), the load retries put on
// the servers over time (capacity), and the findings, the changes to the
// retry policies the data supports, most costly first. Package report
// holds them in its JSON contract and lays them out as tables.
package analysis
