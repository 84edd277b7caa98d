//go:build !linux

package kafkatest

import "os/exec"

// dieWithParent has no equivalent here: a broker outlives a test process
// that ends without its cleanups (StopShared, t.Cleanup).
func dieWithParent(*exec.Cmd) {}
