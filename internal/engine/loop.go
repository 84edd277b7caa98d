package engine

import (
	"context"
	"time"
)

// Loop runs a processing-time stream: a step each interval, and after a
// failed step a retry with backoff, until the step succeeds, fails in a
// way a retry cannot mend, or fails again after MaxRetries retries in a
// row.
// A single process and a cluster worker run the same Loop, so that they
// share one failure policy: a process that cannot go on says so and exits
// non-zero (for a worker, its group hands its partitions to the others)
// instead of running on with nothing committed.
type Loop struct {
	// Interval is the trigger's: a step starts at most this often, and
	// the first retry waits this long.
	Interval time.Duration
	// Idle is the least wait after a step that found nothing new, however
	// short the interval, so that a tiny interval does not poll the source
	// in a busy loop (Spark's pollingDelay).
	Idle time.Duration
	// MaxRetries is how many times in a row a failed step is retried; the
	// failure after the last retry ends Run.
	MaxRetries int
	// MaxBackoff caps the doubling wait between retries.
	MaxBackoff time.Duration
	// Transient tells failures worth retrying from those that fail the
	// same way again.
	Transient func(error) bool
	// Stopped tells that the stream was asked to stop after its current
	// step; Stop wakes a wait when it is.
	Stopped func() bool
	Stop    <-chan struct{}
	// OnFailure hears of each failure that will be retried, with the
	// failures in a row so far and the wait before the retry.
	OnFailure func(err error, failures int, retryIn time.Duration)
	// OnIdle hears of each step that found nothing new: the stream is
	// alive between batches.
	OnIdle func()
}

// Step runs one batch (or one interval of a worker). retry tells that the
// step before failed, so that the step can first resume from what is
// durable; ran tells that it found input.
type Step func(ctx context.Context, retry bool) (ran bool, err error)

// Run runs steps until the stream is stopped (nil), ctx ends (nil), or a
// step fails for good (its error).
func (l Loop) Run(ctx context.Context, step Step) error {
	backoff, failures := l.Interval, 0
	for !l.Stopped() {
		began := time.Now()
		ran, err := step(ctx, failures > 0)
		var wait time.Duration
		if err != nil {
			failures++
			if !l.Transient(err) || ctx.Err() != nil || failures > l.MaxRetries {
				return err
			}
			if l.OnFailure != nil {
				l.OnFailure(err, failures, backoff)
			}
			wait, backoff = backoff, min(2*backoff, l.MaxBackoff)
		} else {
			backoff, failures = l.Interval, 0
			wait = l.Interval - time.Since(began)
			if !ran {
				wait = max(wait, l.Idle)
				if l.OnIdle != nil {
					l.OnIdle()
				}
			}
			if wait <= 0 {
				continue
			}
		}
		select {
		case <-time.After(wait):
		case <-l.Stop:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}
