// Package model holds retryscope's plain domain types: spans as ingested,
// logical requests and their attempts, triggers and baseline kinds. It imports
// neither OTLP nor DuckDB, so every other package can share it.
package model
