package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/floe-io/floe/internal/fixture"
)

// Kafka Connect's Iceberg sink (1.10.1) beside floe: a standalone worker
// of Apache Kafka's Connect runtime, run from the engines' jars, writes the
// topic into db.events through `floe serve` (the REST catalog), with a
// control topic and a commit interval. Iceberg's JDBC catalog over SQLite
// cannot serve the sink: its tasks' catalogs fail to start with
// SQLITE_BUSY ("Cannot check and eventually update SQL schema").

// ConnectSink is one worker process with the sink configured.
type ConnectSink struct {
	eng                     *fixture.Engines
	dir, bootstrap, catalog string
	topic, control          string
	tasks                   int
	interval                time.Duration

	cmd   *exec.Cmd
	start time.Time
	log   *os.File
}

// NewConnectSink prepares a worker under dir that runs the connector name
// (whose consumer group, connect-<name>, holds its offsets: a new name reads
// the topic from the start) reading topic with tasks tasks and committing
// through the REST catalog at catalogURI every interval, coordinating on
// the control topic (which must exist).
func NewConnectSink(dir, name, bootstrap, topic, control, catalogURI string, tasks int, interval time.Duration) (*ConnectSink, error) {
	eng, why := fixture.FindEngines()
	if why != "" {
		return nil, fmt.Errorf("%s: run interop/engines/install.sh", why)
	}
	c := &ConnectSink{eng: eng, dir: dir, bootstrap: bootstrap, catalog: catalogURI, topic: topic, control: control, tasks: tasks, interval: interval}
	plugins := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		return nil, err
	}
	// The plugin path holds one plugin, the sink's jars.
	if err := os.Symlink(filepath.Join(eng.Dir, "jars", "connect"), filepath.Join(plugins, "iceberg")); err != nil && !os.IsExist(err) {
		return nil, err
	}
	files := map[string]string{
		"worker.properties": fmt.Sprintf(`bootstrap.servers=%s
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
offset.storage.file.filename=%s
plugin.path=%s
listeners=http://127.0.0.1:0
consumer.auto.offset.reset=earliest
`, bootstrap, filepath.Join(dir, "connect.offsets"), plugins),
		"sink.properties": fmt.Sprintf(`name=%s
connector.class=org.apache.iceberg.connect.IcebergSinkConnector
tasks.max=%d
topics=%s
iceberg.tables=db.events
iceberg.tables.auto-create-enabled=true
iceberg.catalog=floe
iceberg.catalog.type=rest
iceberg.catalog.uri=%s
iceberg.control.topic=%s
iceberg.control.commit.interval-ms=%d
iceberg.kafka.bootstrap.servers=%s
iceberg.kafka.auto.offset.reset=earliest
`, name, tasks, topic, catalogURI, control, interval.Milliseconds(), bootstrap),
		"log4j.properties": `log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.reflections=ERROR
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Start starts the worker; its output goes to connect-N.log.
func (c *ConnectSink) Start(n int) error {
	var err error
	if c.log, err = os.Create(filepath.Join(c.dir, fmt.Sprintf("connect-%d.log", n))); err != nil {
		return err
	}
	c.cmd = exec.Command("java", "-Xmx1g", "-Dlog4j.configuration=file:"+filepath.Join(c.dir, "log4j.properties"),
		"-cp", c.eng.Classpath("kafka"), "org.apache.kafka.connect.cli.ConnectStandalone",
		filepath.Join(c.dir, "worker.properties"), filepath.Join(c.dir, "sink.properties"))
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	c.start = time.Now()
	return c.cmd.Start()
}

// Stop ends the worker with sig (SIGTERM, or SIGKILL for a crash) and
// returns what the process cost from its start.
func (c *ConnectSink) Stop(sig syscall.Signal) ProcCost {
	_ = c.cmd.Process.Signal(sig)
	_ = c.cmd.Wait()
	cost := costOf(c.cmd.ProcessState, time.Since(c.start))
	c.log.Close()
	return cost
}

var connectCommit = regexp.MustCompile(`Commit complete to table db.events, snapshot (\d+)`)

// Commits counts the table commits the worker's coordinator logged in
// run n.
func (c *ConnectSink) Commits(n int) int {
	b, _ := os.ReadFile(filepath.Join(c.dir, fmt.Sprintf("connect-%d.log", n)))
	return len(connectCommit.FindAll(b, -1))
}

// ServeProcess is `floe serve` over a warehouse, the REST catalog the sink
// commits through.
type ServeProcess struct {
	cmd *exec.Cmd
	URI string
	log *os.File
}

// StartServe starts the floe binary's REST catalog over warehouse.
func StartServe(bin, warehouse string) (*ServeProcess, error) {
	if err := os.MkdirAll(warehouse, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(filepath.Dir(warehouse), "serve.log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	s := &ServeProcess{cmd: exec.Command(bin, "serve", "--warehouse", warehouse, "--listen", "127.0.0.1:0"), log: log}
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	uri := regexp.MustCompile(`uri=(http://[0-9.:]+)`)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(logPath)
		if m := uri.FindSubmatch(b); m != nil {
			s.URI = string(m[1])
			return s, nil
		}
	}
	s.Stop()
	return nil, fmt.Errorf("floe serve printed no address")
}

// Stop ends the server.
func (s *ServeProcess) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
	s.log.Close()
}

// TableCount is the row count of a table of the warehouse, by the floe
// binary's scan (-1 while the table does not exist yet).
func TableCount(ctx context.Context, bin, warehouse, table string) int64 {
	out, err := exec.CommandContext(ctx, bin, "scan", table, "--warehouse", warehouse, "--count").Output()
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return -1
	}
	return n
}
