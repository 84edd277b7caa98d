package engine

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

var errPermanent = errors.New("permanent")

// loopFor is a loop with tiny waits whose failures and idle steps are
// counted, stopped once stop says so.
func loopFor(retries []time.Duration, idle *int, stop func() bool) Loop {
	return Loop{Interval: time.Microsecond, Idle: time.Microsecond, MaxRetries: 3, MaxBackoff: 4 * time.Microsecond,
		Transient: func(err error) bool { return !errors.Is(err, errPermanent) },
		Stopped:   stop,
		OnFailure: func(_ error, failures int, in time.Duration) { retries[failures-1] = in },
		OnIdle:    func() { *idle++ }}
}

// A failed step is retried with a doubling wait, told that it retries,
// and the failure after MaxRetries retries in a row ends the loop.
func TestLoopGivesUpAfterRetries(t *testing.T) {
	retries := make([]time.Duration, 3)
	var idle, steps int
	var retried []bool
	boom := errors.New("catalog unreachable")
	err := loopFor(retries, &idle, func() bool { return false }).Run(t.Context(), func(_ context.Context, retry bool) (bool, error) {
		steps++
		retried = append(retried, retry)
		return false, boom
	})
	if !errors.Is(err, boom) || steps != 4 {
		t.Fatalf("Run = %v after %d steps, want the step's failure after 1 + 3 retries", err, steps)
	}
	if want := []time.Duration{time.Microsecond, 2 * time.Microsecond, 4 * time.Microsecond}; !slices.Equal(retries, want) {
		t.Fatalf("retry waits %v, want %v (doubling from the interval, capped)", retries, want)
	}
	if want := []bool{false, true, true, true}; !slices.Equal(retried, want) {
		t.Fatalf("retry flags %v, want %v", retried, want)
	}
}

// A success resets the count: failures apart from each other never end
// the loop, and the wait starts again from the interval.
func TestLoopSuccessResetsFailures(t *testing.T) {
	retries := make([]time.Duration, 3)
	var idle, steps int
	err := loopFor(retries, &idle, func() bool { return steps >= 12 }).Run(t.Context(), func(context.Context, bool) (bool, error) {
		steps++
		if steps%3 != 0 {
			return false, errors.New("flaky")
		}
		return true, nil
	})
	if err != nil || steps != 12 {
		t.Fatalf("Run = %v after %d steps, want nil after 12 (two failures, then a success, four times)", err, steps)
	}
	if retries[0] != time.Microsecond || retries[1] != 2*time.Microsecond || retries[2] != 0 {
		t.Fatalf("retry waits %v: each run of failures starts from the interval and never reaches a third", retries)
	}
	if idle != 0 {
		t.Fatalf("%d idle steps, want none: every success found input", idle)
	}
}

// A failure a retry cannot mend ends the loop at once; a step that finds
// nothing is idle; a stop ends the loop after the step.
func TestLoopPermanentIdleAndStop(t *testing.T) {
	retries := make([]time.Duration, 3)
	var idle, steps int
	err := loopFor(retries, &idle, func() bool { return false }).Run(t.Context(), func(context.Context, bool) (bool, error) {
		steps++
		return false, errPermanent
	})
	if !errors.Is(err, errPermanent) || steps != 1 || retries[0] != 0 {
		t.Fatalf("Run = %v after %d steps (retry wait %v), want the permanent failure at once", err, steps, retries[0])
	}
	steps = 0
	err = loopFor(retries, &idle, func() bool { return steps == 5 }).Run(t.Context(), func(context.Context, bool) (bool, error) {
		steps++
		return false, nil
	})
	if err != nil || steps != 5 || idle != 5 {
		t.Fatalf("Run = %v after %d steps, %d idle; want nil after 5 idle steps", err, steps, idle)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = Loop{Interval: time.Hour, Idle: time.Hour, MaxRetries: 3, MaxBackoff: time.Hour, Transient: func(error) bool { return true },
		Stopped: func() bool { return false }}.Run(ctx, func(context.Context, bool) (bool, error) { return true, nil })
	if err != nil {
		t.Fatalf("Run with its context ended = %v, want nil (a cancelled stream ends quietly)", err)
	}
}
