//go:build floetest

package main

import (
	"os"
	"strconv"

	"github.com/floe-io/floe"
)

// CrashAfterTableCommitsEnv makes a test build exit at once, as a kill
// would, right after that many table commits of the run: the checkpoint
// has not recorded the batch, and the other tables of the batch are not
// committed yet.
const CrashAfterTableCommitsEnv = "FLOE_TEST_CRASH_AFTER_TABLE_COMMITS"

func init() {
	testHooks = func(o *floe.Options) {
		n, err := strconv.Atoi(os.Getenv(CrashAfterTableCommitsEnv))
		if err != nil || n <= 0 {
			return
		}
		commits := 0
		o.AfterTableCommit = func(string, int64, int64) error {
			if commits++; commits == n {
				os.Exit(137)
			}
			return nil
		}
	}
}
