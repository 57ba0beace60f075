package ingest

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/retryscope/retryscope/model"
)

type missingInput struct {
	path string
	rej  model.Rejection
}

// expand turns command-line paths into the files to read, in a stable
// order: a directory is walked recursively (hidden entries skipped), a
// pattern is globbed, "-" stands for stdin. A path that names nothing is
// returned as missing, so it is reported and counted, not fatal.
func expand(paths []string, exclude []string) (files []string, missing []missingInput) {
	skip := map[string]bool{}
	for _, e := range exclude {
		if abs, err := filepath.Abs(e); err == nil {
			skip[abs] = true
		}
	}
	seen := map[string]bool{}
	addFile := func(p string) {
		abs, err := filepath.Abs(p)
		if err == nil && (skip[abs] || skip[filepath.Dir(abs)] || seen[abs]) {
			return
		}
		seen[abs] = true
		files = append(files, p)
	}
	for _, p := range paths {
		if p == "-" {
			files = append(files, p)
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			matches, gerr := filepath.Glob(p)
			if gerr != nil || len(matches) == 0 {
				detail := "no such file or directory"
				if strings.ContainsAny(p, "*?[") {
					detail = "the pattern matched no files"
				}
				missing = append(missing, missingInput{p, model.Rejection{Reason: "no_such_path", Detail: detail}})
				continue
			}
			sort.Strings(matches)
			for _, m := range matches {
				if mfi, err := os.Stat(m); err == nil && mfi.IsDir() {
					walk(m, addFile)
				} else {
					addFile(m)
				}
			}
			continue
		}
		if fi.IsDir() {
			walk(p, addFile)
		} else {
			addFile(p)
		}
	}
	return files, missing
}

func walk(root string, add func(string)) {
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			add(p) // reported as unreadable when opened
			return nil
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			add(p)
		}
		return nil
	})
}
