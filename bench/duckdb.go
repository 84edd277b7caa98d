package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrNoDuckDB reports that the DuckDB contender cannot run here.
var ErrNoDuckDB = errors.New("duckdb contender unavailable")

// DuckDBModulesEnv names a directory whose node_modules holds
// @duckdb/node-api, instead of interop/ beside bench/.
const DuckDBModulesEnv = "FLOE_BENCH_DUCKDB_MODULES"

// DuckDB answers scan queries with DuckDB's Parquet reader, through
// scan_duckdb.mjs in a node process of its own per query: the fastest
// reader at hand, the line under floe and iceberg-go. It is given the
// table's live data files and no Iceberg metadata, so any pruning is its
// own (Parquet statistics). It also writes Parquet, by COPY through
// ingest_duckdb.mjs beside it (Copy).
type DuckDB struct {
	Node    string // node executable
	Script  string // scan_duckdb.mjs
	Modules string // directory with node_modules/@duckdb/node-api
}

// FindDuckDB finds node and @duckdb/node-api for the script in benchDir
// (the bench package's directory); the error, ErrNoDuckDB, says what is
// missing and how to install it.
func FindDuckDB(benchDir string) (*DuckDB, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("%w: node is not on PATH: %v", ErrNoDuckDB, err)
	}
	script, err := filepath.Abs(filepath.Join(benchDir, "scan_duckdb.mjs"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDuckDB, err)
	}
	modules := os.Getenv(DuckDBModulesEnv)
	if modules == "" {
		modules = filepath.Join(benchDir, "..", "interop")
	}
	if modules, err = filepath.Abs(modules); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(modules, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		return nil, fmt.Errorf("%w: @duckdb/node-api is not installed under %s (run `cd interop && npm ci`, or set %s to a directory that has it)", ErrNoDuckDB, modules, DuckDBModulesEnv)
	}
	return &DuckDB{Node: node, Script: script, Modules: modules}, nil
}

// Scan answers q over the fixture's data files. Wall and CPU are the
// script's own, around the query; Process is the whole node process.
func (d *DuckDB) Scan(ctx context.Context, fx *ScanFixture, q ScanQuery) (ScanResult, error) {
	req, err := json.Marshal(map[string]any{"modules": d.Modules, "files": fx.DataFiles, "where": q.Where})
	if err != nil {
		return ScanResult{}, err
	}
	cmd := exec.CommandContext(ctx, d.Node, d.Script)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(req), &stdout, &stderr
	t0 := time.Now()
	err = cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		return ScanResult{}, fmt.Errorf("duckdb %s: %w: %s", q.Name, err, strings.TrimSpace(stderr.String()))
	}
	var out struct {
		Rows   string  `json:"rows"`
		Sum    float64 `json:"sum"`
		WallMs float64 `json:"wallMs"`
		CPUMs  float64 `json:"cpuMs"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return ScanResult{}, fmt.Errorf("duckdb %s: read script output %q: %w", q.Name, stdout.String(), err)
	}
	rows, err := strconv.ParseInt(out.Rows, 10, 64)
	if err != nil {
		return ScanResult{}, fmt.Errorf("duckdb %s: row count %q: %w", q.Name, out.Rows, err)
	}
	ms := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
	return ScanResult{
		Contender:  "duckdb",
		Query:      q.Name,
		ScanAnswer: ScanAnswer{Rows: rows, Sum: out.Sum},
		Files:      len(fx.DataFiles),
		TableRows:  fx.Dataset.Rows(),
		TableFiles: len(fx.DataFiles),
		Cost:       Cost{Wall: ms(out.WallMs), CPU: ms(out.CPUMs)},
		Process:    Cost{Wall: wall, CPU: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()},
	}, nil
}

// DuckDBCopy is one COPY of input files into one zstd Parquet file by
// ingest_duckdb.mjs.
type DuckDBCopy struct {
	Format string // csv, json or parquet
	Files  []string
	Out    string
	// Threads, Level and RowGroupSize are DuckDB's threads setting, zstd
	// level and row group rows; 0 leaves DuckDB's default.
	Threads, Level, RowGroupSize int
}

// Copy runs c in a node process of its own and returns the rows COPY
// wrote, the cost of the COPY alone (the script's own measure) and that of
// the whole process.
func (d *DuckDB) Copy(ctx context.Context, c DuckDBCopy) (int64, Cost, ProcCost, error) {
	req, err := json.Marshal(map[string]any{"modules": d.Modules, "format": c.Format, "files": c.Files, "out": c.Out,
		"threads": c.Threads, "level": c.Level, "rowGroupSize": c.RowGroupSize})
	if err != nil {
		return 0, Cost{}, ProcCost{}, err
	}
	cmd := exec.CommandContext(ctx, d.Node, filepath.Join(filepath.Dir(d.Script), "ingest_duckdb.mjs"))
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(req), &stdout, &stderr
	rss := peakRSSOf(cmd)
	t0 := time.Now()
	err = cmd.Run()
	proc := costOf(cmd.ProcessState, time.Since(t0))
	if r := rss(); r > 0 {
		proc.PeakRSS = r
	}
	if err != nil {
		return 0, Cost{}, proc, fmt.Errorf("duckdb copy of %d %s files: %w: %s", len(c.Files), c.Format, err, strings.TrimSpace(stderr.String()))
	}
	var out struct {
		Rows   string  `json:"rows"`
		WallMs float64 `json:"wallMs"`
		CPUMs  float64 `json:"cpuMs"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return 0, Cost{}, proc, fmt.Errorf("duckdb copy: read script output %q: %w", stdout.String(), err)
	}
	rows, err := strconv.ParseInt(out.Rows, 10, 64)
	if err != nil {
		return 0, Cost{}, proc, fmt.Errorf("duckdb copy: row count %q: %w", out.Rows, err)
	}
	ms := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
	return rows, Cost{Wall: ms(out.WallMs), CPU: ms(out.CPUMs)}, proc, nil
}
