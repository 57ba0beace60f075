package ingest

// SetSmallFileBytes sets the size up to which a file is read whole and
// stored with others, and returns a func that restores it; -1 stores every
// file alone.
func SetSmallFileBytes(n int64) (restore func()) {
	old := smallFileBytes
	smallFileBytes = n
	return func() { smallFileBytes = old }
}
