package main_test

import "flag"

// The fault harness is the set of TestFault* tests: each drives floe through
// a fault at a boundary (a catalog's lost answer, a Kafka topic re-created,
// a kill at a phase of a commit) and checks the table's rows with a reader
// that is not floe's scan. The default suite runs one round of each
// scenario; the long run repeats them:
//
//	go test ./cmd/floe -run '^TestFault' -fault-rounds 20
var faultRounds = flag.Int("fault-rounds", 1, "rounds of each scenario of the fault harness (TestFault*); the long run: 20")
