package files

import "time"

// SetClock replaces the source's clock, for tests of what a later batch
// does.
func SetClock(s *Files, now func() time.Time) { s.now = now }

// NextListing is the path the next batch's listing starts after; "" is a
// full listing.
func NextListing(s *Files) string { return s.startAfter(s.now()) }
