package kafkatest

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the broker when the test process
// ends, however it ends: a JVM left behind would hold its ports and
// memory.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
