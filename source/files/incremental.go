package files

import (
	"fmt"
	"strings"
	"time"
)

// fullListingEvery is how often auto listing lists the whole landing zone
// although its paths sort by arrival, for files that land late under a
// path that sorts before ones already read (Auto Loader's backfill).
const fullListingEvery = time.Hour

// sortedEvidence is how many new files full listings must have found in
// arrival order, and none out of it, before auto listing trusts that the
// paths sort by arrival: random names pass one small check by chance, and
// a late file then waits for the next full listing.
const sortedEvidence = 16

// incremental is auto listing (source.listing) over one run: while the
// landing zone's paths sort by arrival, a batch lists only paths after
// the greatest one up to which every file is handled (read, or ignored
// for good by max-file-age), so that planning costs what the new files
// cost. Nothing of it is kept in the checkpoint: it only decides which
// files a listing looks at, never which files were read, so a run starts
// with full listings and the log of files seen stays the record.
type incremental struct {
	// after is the path, relative to the landing root with "/" between
	// levels, up to which every file is handled; "" when none is.
	after string
	// inOrder counts the new files full listings found in arrival order;
	// off says one found a file out of it (or a linked file), which ends
	// incremental listing for the run.
	inOrder  int
	off      bool
	lastFull time.Time
	// told is whether the run was told how it lists.
	told bool
}

// listing is what one listing of the landing zone saw, by path relative
// to the root: the files it handled for good (read before, or too old)
// and the ones it held back for a later batch; the new files it offers
// are the listing's candidates.
type listing struct {
	full     bool
	handled  []string
	held     []string
	lastRead string // the greatest path among the files read before
}

// startAfter is the path a listing starts after, "" for a full listing.
func (s *Files) startAfter(now time.Time) string {
	in := &s.inc
	if s.cfg.Listing == "full" || s.cfg.LatestFirst || in.off || in.inOrder < sortedEvidence || in.after == "" ||
		now.Sub(in.lastFull) >= fullListingEvery {
		return ""
	}
	return in.after
}

// planned moves auto listing on once a batch took picked of the offered
// cands: the greatest path handled below every path left unhandled (held
// back, or offered and not taken) is where the next listing starts. A
// full listing also checks that the paths sort by arrival: a new file
// sorting before one read earlier, or before one of the batch when the
// batch took the oldest files, says they do not.
func (s *Files) planned(l listing, cands, picked []fileEntry, now time.Time) {
	in := &s.inc
	if s.cfg.Listing == "full" || s.cfg.LatestFirst || in.off {
		return
	}
	taken := make(map[string]bool, len(picked))
	lastPicked := ""
	for _, f := range picked {
		taken[f.Path] = true
		lastPicked = max(lastPicked, s.relKey(f.Path))
	}
	least, any := "", false // the least path left unhandled
	lower := func(rel string) {
		if !any || rel < least {
			least, any = rel, true
		}
	}
	for _, rel := range l.held {
		lower(rel)
	}
	handled := l.handled
	for _, c := range cands {
		rel := s.relKey(c.Path)
		if taken[c.Path] {
			handled = append(handled, rel)
		} else {
			lower(rel)
		}
	}
	if l.full {
		in.lastFull = now
		late := ""
		for _, c := range cands {
			if rel := s.relKey(c.Path); rel < l.lastRead && (late == "" || rel < late) {
				late = rel
			}
		}
		if late == "" && any && least < lastPicked {
			late = least // left for later, yet it sorts before a file taken now
		}
		if late != "" {
			in.off = true
			if in.inOrder >= sortedEvidence {
				s.warns = append(s.warns, fmt.Sprintf("%s arrived after files whose paths sort after it: the paths of %s do not sort by arrival, "+
					"so every batch of this run lists the whole landing zone; set source.listing: full (--listing full) if they never do", s.relPath(late), s.dir))
			}
			s.tell(fmt.Sprintf("listing the whole of %s on every batch: its paths do not sort by arrival (%s landed after files whose paths sort after it)", s.dir, s.relPath(late)))
			return
		}
		// A new file counts once something older was there to sort before
		// it: a file read before, or one this batch took.
		if l.lastRead != "" {
			in.inOrder += len(cands) + len(l.held)
		} else if lastPicked != "" {
			in.inOrder += len(cands) - len(picked) + len(l.held)
		}
		in.after = ""
	}
	after := in.after
	for _, rel := range handled {
		if (!any || rel < least) && rel > after {
			after = rel
		}
	}
	in.after = after
	if in.inOrder >= sortedEvidence {
		s.tell(fmt.Sprintf("listing %s incrementally: its paths sort by arrival, so a batch lists only paths after the last file handled, and the whole landing zone once an hour", s.dir))
	}
}

// tell says, once a run, how the source lists.
func (s *Files) tell(msg string) {
	if s.inc.told || s.logger == nil {
		return
	}
	s.inc.told = true
	s.logger.Info(msg)
}

// relKey is a landing file's path relative to the root, "/" between
// levels: what auto listing compares.
func (s *Files) relKey(p string) string {
	rel, err := s.store.rel(p)
	if err != nil {
		return p
	}
	return rel
}

// relPath is the full path of a relative one, for messages.
func (s *Files) relPath(rel string) string { return s.store.join(rel) }

// descend tells whether a directory at relative path dir can hold a file
// whose path sorts after `after`: a path below dir starts with dir+"/",
// so every one sorts before `after` when dir+"/" does and is not a prefix
// of it.
func descend(dir, after string) bool {
	if after == "" {
		return true
	}
	prefix := dir + "/"
	return prefix > after || strings.HasPrefix(after, prefix)
}
