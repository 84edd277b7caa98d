package commit

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
)

// Policy is a table's commit retry policy, from its commit.retry.*
// properties with Iceberg Java's defaults: 4 retries, waits from 100 ms
// doubling to 60 s, 30 minutes in all. (iceberg-go's own default is no
// retry, and its retry does not cover a lost race in the SQL, Hadoop and
// Glue catalogs; this loop does, for every catalog.)
type Policy struct {
	Retries          int
	MinWait, MaxWait time.Duration
	Deadline         time.Time
}

const defaultRetries = 4

// PolicyOf reads tbl's policy, or the defaults when tbl is nil; the
// deadline starts now.
func PolicyOf(tbl *table.Table) Policy {
	get := func(key string, def int64) int64 {
		if tbl == nil {
			return def
		}
		if n, err := strconv.ParseInt(tbl.Properties()[key], 10, 64); err == nil && n >= 0 {
			return n
		}
		return def
	}
	return Policy{
		Retries:  int(get(table.CommitNumRetriesKey, defaultRetries)),
		MinWait:  time.Duration(get(table.CommitMinRetryWaitMsKey, table.CommitMinRetryWaitMsDefault)) * time.Millisecond,
		MaxWait:  time.Duration(get(table.CommitMaxRetryWaitMsKey, table.CommitMaxRetryWaitMsDefault)) * time.Millisecond,
		Deadline: time.Now().Add(time.Duration(get(table.CommitTotalRetryTimeoutMsKey, table.CommitTotalRetryTimeoutMsDefault)) * time.Millisecond),
	}
}

// Wait is how long to wait before retrying after the given failed attempt
// (from 1), with jitter; false when the policy allows no more attempts.
func (p Policy) Wait(attempt int) (time.Duration, bool) {
	if attempt > p.Retries || time.Now().After(p.Deadline) {
		return 0, false
	}
	wait := min(p.MinWait<<(attempt-1), p.MaxWait)
	return wait/2 + rand.N(wait/2+1), true
}

// Attempt stages one change against tbl and commits it, returning the
// table as the commit left it. It may be called several times, each time
// with fresher metadata, and must have no effect outside its transaction
// that a second call would repeat.
type Attempt func(ctx context.Context, tbl *table.Table) (*table.Table, error)

// Retry is the one commit loop of floe: ingestion, schema and partition
// spec evolution and maintenance all commit through it. The first attempt
// starts from base when given (a table the caller just loaded or
// committed), every later one from a fresh load. Any failure is retried
// under the table's Policy: a lost race is won on fresh metadata, and a
// catalog briefly unreachable comes back; an error marked Final ends the
// loop at once. It returns the last error, still marked when it was
// Final, with the number of attempts, for the caller to wrap.
func Retry(ctx context.Context, load func(context.Context) (*table.Table, error), base *table.Table, attempt Attempt) (*table.Table, int, error) {
	var pol *Policy
	for n := 1; ; n++ {
		tbl, err := base, error(nil)
		base = nil
		if tbl == nil {
			tbl, err = load(ctx)
		}
		var out *table.Table
		if err == nil {
			if pol == nil {
				p := PolicyOf(tbl)
				pol = &p
			}
			if out, err = attempt(ctx, tbl); err == nil {
				return out, n, nil
			}
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, n, cerr
		}
		if IsFinal(err) {
			return nil, n, err
		}
		if pol == nil {
			p := PolicyOf(nil) // the table could not be loaded to read its own
			pol = &p
		}
		wait, again := pol.Wait(n)
		if !again {
			return nil, n, err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, n, ctx.Err()
		}
	}
}

// Final marks an error that a retry would meet again (a change that cannot
// be planned, a configuration the table refuses): Retry returns it at once.
func Final(err error) error {
	if err == nil {
		return nil
	}
	return finalError{err}
}

// IsFinal reports whether err was marked Final.
func IsFinal(err error) bool {
	var fin finalError
	return errors.As(err, &fin)
}

type finalError struct{ err error }

func (e finalError) Error() string { return e.err.Error() }
func (e finalError) Unwrap() error { return e.err }

// IsConflict tells a commit the catalog definitely rejected (a lost race,
// a failed requirement), which a retry on fresh metadata may win, from one
// whose outcome is unknown.
func IsConflict(err error) bool {
	if errors.Is(err, rest.ErrCommitStateUnknown) {
		return false
	}
	if errors.Is(err, table.ErrCommitFailed) {
		return true
	}
	// iceberg-go's SQL, Hadoop and Glue catalogs report a lost race as a
	// failed requirement, not wrapped in ErrCommitFailed.
	msg := err.Error()
	return strings.Contains(msg, "requirement failed") || strings.Contains(msg, "has changed")
}
