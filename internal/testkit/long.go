package testkit

import "os"

// Long reports whether the long checks were asked for
// (RETRYSCOPE_LONG=1): tests then run at the sizes that find rare
// problems (hundreds of thousands of spans) instead of the sizes that
// keep go test ./... to a few minutes. docs/development.md lists them.
func Long() bool { return os.Getenv("RETRYSCOPE_LONG") == "1" }
