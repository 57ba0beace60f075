package ingest

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
// returned as missing, so it is reported and counted, not fatal. walked
// holds the files found in a directory, not named; truth lists the truth
// files of retryscope gen (*.truth.json) found in a directory, which are
// left out: gen writes one beside every dump.
func expand(paths []string, exclude []string) (files []string, walked map[string]bool, missing []missingInput, truth []string) {
	walked = map[string]bool{}
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
		// A file reached through links is read once, and the database is
		// never read through a link to it.
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if real, err = filepath.Abs(real); err == nil {
				if skip[real] || skip[filepath.Dir(real)] || seen[real] {
					return
				}
				seen[real] = true
			}
		}
		seen[abs] = true
		files = append(files, p)
	}
	addWalked := func(p string) {
		if strings.HasSuffix(p, TruthSuffix) {
			truth = append(truth, p)
			return
		}
		walked[p] = true
		addFile(p)
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
					walk(m, addWalked)
				} else {
					addFile(m)
				}
			}
			continue
		}
		if fi.IsDir() {
			walk(p, addWalked)
		} else {
			addFile(p)
		}
	}
	return files, walked, missing, truth
}

// TruthSuffix ends the name of the truth file retryscope gen writes beside
// its traces; a directory walk leaves such files out (a file named on the
// command line is still read).
const TruthSuffix = ".truth.json"

// walk lists the files under root (regular ones, FIFOs, and other special
// files, to be refused with a reason), in name order, following
// symbolic links to files and directories; a link back to a directory
// being walked is not followed again. A link that leads nowhere is listed,
// to be reported as unreadable when opened.
func walk(root string, add func(string)) {
	fi, err := os.Stat(root)
	if err != nil {
		add(root)
		return
	}
	walkDir(root, []os.FileInfo{fi}, add)
}

func walkDir(dir string, ancestors []os.FileInfo, add func(string)) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		add(dir) // reported as unreadable when opened
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		t := e.Type()
		if t&fs.ModeSymlink != 0 {
			fi, err := os.Stat(p)
			if err != nil {
				add(p)
				continue
			}
			t = fi.Mode().Type()
		}
		switch {
		case t.IsDir():
			fi, err := os.Stat(p)
			if err != nil {
				add(p)
				continue
			}
			if slices.ContainsFunc(ancestors, func(a os.FileInfo) bool { return os.SameFile(a, fi) }) {
				continue // a loop of links
			}
			walkDir(p, append(ancestors[:len(ancestors):len(ancestors)], fi), add)
		default:
			add(p)
		}
	}
}
