package serve

import (
	"net/http"
	"sync"
	"time"
)

// idempotency remembers the final response of each mutation that carried
// an Idempotency-Key, so that a client retrying after a lost response gets
// the first answer instead of a second commit (or a 409 for its own
// create). A retry that arrives while the first is running waits for it.
// 5xx responses are not final: the operation's outcome is unknown, and a
// retry runs it again, as the specification says.
type idempotency struct {
	lifetime time.Duration

	mu        sync.Mutex
	entries   map[string]*keyed
	lastSweep time.Time
}

type keyed struct {
	op      string // method and path: a key is never reused across operations
	done    chan struct{}
	res     response
	final   bool
	expires time.Time
}

func newIdempotency(lifetime time.Duration) *idempotency {
	return &idempotency{lifetime: lifetime, entries: map[string]*keyed{}}
}

// do runs op once per key and returns its final response to every request
// that carries the key.
func (k *idempotency) do(key, op string, run func() response) response {
	for {
		now := time.Now()
		k.mu.Lock()
		k.sweep(now)
		e, seen := k.entries[key]
		if !seen {
			e = &keyed{op: op, done: make(chan struct{})}
			k.entries[key] = e
			k.mu.Unlock()
			return k.first(key, e, run)
		}
		k.mu.Unlock()
		if e.op != op {
			return badRequest("Idempotency-Key %s was used for %s; a key belongs to one operation, generate a new one for this request", key, e.op)
		}
		<-e.done
		if e.final {
			return e.res
		}
		// The first attempt ended without a final answer and was
		// forgotten: this retry runs the operation itself.
	}
}

func (k *idempotency) first(key string, e *keyed, run func() response) (res response) {
	defer func() {
		k.mu.Lock()
		if res.status >= http.StatusInternalServerError || res.status == 0 {
			delete(k.entries, key)
		} else {
			e.res, e.final, e.expires = res, true, time.Now().Add(k.lifetime)
		}
		k.mu.Unlock()
		close(e.done)
	}()
	return run()
}

// sweep forgets expired keys, at most once a minute.
func (k *idempotency) sweep(now time.Time) {
	if now.Sub(k.lastSweep) < time.Minute {
		return
	}
	k.lastSweep = now
	for key, e := range k.entries {
		if e.final && now.After(e.expires) {
			delete(k.entries, key)
		}
	}
}
