//go:build !unix

package main

import "os"

// terminalWidth is 0, unknown, where there is no ioctl to ask.
func terminalWidth(*os.File) int { return 0 }
