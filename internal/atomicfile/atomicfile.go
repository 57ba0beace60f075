// Package atomicfile writes an output file so that a reader sees either
// the old file or the whole new one: the bytes go to NAME.tmp, which is
// renamed over NAME once they are on disk. A name that is not a regular
// file (/dev/null, /dev/stdout, a FIFO, a terminal) is written in place:
// renaming over it would replace the device with a regular file. The
// report and the Parquet export write their files through it.
package atomicfile

import (
	"fmt"
	"io"
	"os"

	"github.com/retryscope/retryscope/internal/crashpoint"
)

// File is an output file being written; Commit publishes it, Abort drops
// it.
type File struct {
	*os.File
	path, tmp string // tmp is "" when writing in place
}

// Create starts writing path.
func Create(path string) (*File, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return nil, fmt.Errorf("%s is a directory", path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &File{File: f, path: path}, nil
	} else if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return nil, err
	}
	return &File{File: f, path: path, tmp: tmp}, nil
}

// InPlace reports whether the file is written in place (not a regular
// file), so nothing is renamed.
func (f *File) InPlace() bool { return f.tmp == "" }

// Close flushes a regular file to disk and closes it; Commit then renames
// it. For a device or pipe it only closes.
func (f *File) Close() error {
	var err error
	if f.tmp != "" {
		err = f.File.Sync() // the rename must not publish a file whose bytes are not on disk
	}
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}

// Commit publishes the closed file under its name.
func (f *File) Commit() error {
	if f.tmp == "" {
		return nil
	}
	if err := os.Rename(f.tmp, f.path); err != nil {
		os.Remove(f.tmp)
		return err
	}
	return nil
}

// Abort closes the file if open and removes what was written beside the
// name; a device or pipe keeps what it was sent.
func (f *File) Abort() {
	f.File.Close()
	if f.tmp != "" {
		os.Remove(f.tmp)
	}
}

// Fill writes the file with write and publishes it: closed, on disk and
// renamed over its name. Between the two it reaches the crashpoint point
// (none when ""), the crash tests' stop for a file whole but not yet
// published; a device or pipe, written in place, has no such moment. On
// any failure it removes what it wrote beside the name.
func (f *File) Fill(point string, write func(io.Writer) error) error {
	err := write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && !f.InPlace() && point != "" {
		err = crashpoint.Hit(point)
	}
	if err == nil {
		err = f.Commit()
	}
	if err != nil {
		f.Abort()
	}
	return err
}

// Publish puts tmp, a file another writer wrote and closed (DuckDB's
// COPY), at path as Fill does its own: flushed to disk, past the
// crashpoint point (none when ""), renamed over path. On failure tmp is
// removed.
func Publish(tmp, path, point string) error {
	err := flush(tmp)
	if err == nil && point != "" {
		err = crashpoint.Hit(point)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// flush makes the bytes of the closed file name durable.
func flush(name string) error {
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
