package cluster

import "context"

// handOver runs one more interval on a coordinator that was stopped
// (SIGTERM) before it leaves the group: what the workers published since
// its last commit is committed now, not after the next coordinator hears
// of the leave (at its next heartbeat) and reaches its next interval, so
// that a rolling restart leaves no interval without a commit. A failure
// is a warning only: the next coordinator commits the same events.
func (w *Worker) handOver(ctx context.Context) {
	a, err := w.Member.Assignment(ctx)
	if err == nil && a.Coordinator {
		_, err = w.interval(ctx)
	}
	if err != nil {
		w.Engine.Warn("the coordinator's last commit before leaving the group failed, and the next coordinator commits its events instead: " + err.Error())
	}
}
