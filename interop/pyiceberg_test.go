package interop_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/floe-io/floe/internal/fixture"
)

// PyIceberg 0.12 as a REST client of floe serve (pyiceberg_check.py), with
// an OAuth2 client required: it creates a namespace and a table partitioned by category, appends with
// pyarrow, scans, adds a column and appends again; floe streams landing
// files into that table through the same server; PyIceberg appends, and
// partitions the table by day(ts) as well; floe streams a new file after
// it; PyIceberg reads every row back, and a scan pruned by both partition
// fields, then purges the table. Rows are compared as sets with counts
// with what went in, never with floe's counters.
func TestPyIcebergThroughServe(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	py := fixture.NeedEngines(t).Python()
	// An OAuth2 client is required, as off localhost: PyIceberg's
	// credential and floe's are the client-credentials grant.
	const credential = "pyiceberg:s3cret"
	if err := os.WriteFile(filepath.Join(e.Dir, "clients.txt"), []byte(credential+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop := serveFloe(t, e, "--oauth-clients", "clients.txt")
	pyiceberg := func(rows [][]pyRow, steps ...string) map[string]json.RawMessage {
		t.Helper()
		args := append([]string{"pyiceberg_check.py", "--uri", base, "--credential", credential}, steps...)
		for i, batch := range rows {
			path := filepath.Join(e.Dir, fmt.Sprintf("%s-%d.jsonl", steps[0], i))
			writeJSONLines(t, path, batch)
			args = append(args, []string{"--rows", "--rows2"}[i], path)
		}
		args = append(args, "--since", fmt.Sprint(pySince))
		cmd := exec.Command(py, args...)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("pyiceberg_check.py %s: %v\n%s", strings.Join(steps, " "), err, stderr.String())
		}
		var answers map[string]json.RawMessage
		if err := json.Unmarshal(out.Bytes(), &answers); err != nil {
			t.Fatalf("pyiceberg_check.py printed %q: %v", out.String(), err)
		}
		return answers
	}
	stream := func(file string, rows []pyRow) {
		t.Helper()
		writePyRows(t, filepath.Join(e.Landing, file), rows)
		e.OK("stream", "--catalog-type", "rest", "--catalog-uri", base, "-p", "credential="+credential, "--source", e.Landing, "--format", "parquet",
			"--table", "pyi.events", "--checkpoint", e.Ckpt, "--trigger", "available-now")
	}
	// Five batches: two by PyIceberg, the first before the column note;
	// one by floe; one by PyIceberg; one by floe after the table is
	// partitioned by day too. floe's batches repeat some rows whole, which
	// the table must hold twice.
	b1, b2, b3, b4, b5 := pyBatch(0, 200, false), pyBatch(200, 300, true), pyBatch(300, 600, true), pyBatch(600, 650, true), pyBatch(650, 900, true)
	b3 = append(b3, b3[:7]...)
	b5 = append(b5, b3[10:13]...)

	created := pyAnswer[struct {
		First, Rows []pyRow
		Schema      []struct {
			ID       int    `json:"id"`
			Name     string `json:"name"`
			Type     string `json:"type"`
			Required bool   `json:"required"`
		}
		Spec              []pySpecField
		Namespaces        []string
		Tables            []string
		Location          string
		WithoutCredential string `json:"without_credential"`
	}](t, pyiceberg([][]pyRow{b1, b2}, "create"), "create")
	checkPyRows(t, "PyIceberg's scan after its first append", created.First, b1)
	checkPyRows(t, "PyIceberg's scan after the column note and a second append", created.Rows, b2, b1)
	if n := len(created.Schema); n != 6 || created.Schema[5].Name != "note" || created.Schema[5].Type != "string" || created.Schema[0].Type != "long" || !created.Schema[0].Required {
		t.Fatalf("the table's schema after PyIceberg added note: %+v", created.Schema)
	}
	if !slices.Equal(created.Namespaces, []string{"pyi"}) || !slices.Equal(created.Tables, []string{"pyi.events"}) ||
		len(created.Spec) != 1 || created.Spec[0].Transform != "identity" {
		t.Fatalf("PyIceberg lists namespaces %v, tables %v, spec %+v", created.Namespaces, created.Tables, created.Spec)
	}
	if created.WithoutCredential != "UnauthorizedError" {
		t.Fatalf("PyIceberg without the credential: %s, want UnauthorizedError", created.WithoutCredential)
	}

	stream("b3.parquet", b3)
	evolved := pyAnswer[struct{ Spec []pySpecField }](t, pyiceberg([][]pyRow{b4}, "append", "evolve"), "evolve")
	if len(evolved.Spec) != 2 || evolved.Spec[1].Transform != "day" {
		t.Fatalf("the spec after PyIceberg's evolution: %+v", evolved.Spec)
	}
	stream("b5.parquet", b5)

	answers := pyiceberg(nil, "read", "drop")
	read := pyAnswer[struct {
		Rows, Filtered []pyRow
		Specs          int
		Snapshots      []struct {
			ID        int64  `json:"id"`
			Parent    *int64 `json:"parent"`
			Operation string `json:"operation"`
		}
		SnapshotsTable int `json:"snapshots_table"`
		Files          []struct {
			Path    string `json:"path"`
			Records int    `json:"records"`
			Spec    int    `json:"spec"`
		}
	}](t, answers, "read")
	checkPyRows(t, "PyIceberg's scan of every batch", read.Rows, b1, b2, b3, b4, b5)
	var filtered []pyRow
	for _, r := range slices.Concat(b1, b2, b3, b4, b5) {
		if r.Category != nil && *r.Category == "b" && r.TS != nil && *r.TS >= pySince {
			filtered = append(filtered, r)
		}
	}
	checkPyRows(t, "PyIceberg's scan of category b since "+time.UnixMicro(pySince).UTC().Format(time.DateOnly), read.Filtered, filtered)
	// One snapshot per batch, each an append on the one before; floe's
	// last batch, the only one after the evolution, wrote under the new
	// spec, and every row of it.
	if len(read.Snapshots) != 5 || read.SnapshotsTable != 5 || read.Specs != 2 {
		t.Fatalf("snapshots %+v (the snapshots table: %d rows), %d specs; want 5 appends and 2 specs", read.Snapshots, read.SnapshotsTable, read.Specs)
	}
	for i, s := range read.Snapshots {
		if s.Operation != "append" || (i > 0 && (s.Parent == nil || *s.Parent != read.Snapshots[i-1].ID)) {
			t.Fatalf("snapshot %d of %+v is no append on the one before", i, read.Snapshots)
		}
	}
	underNewSpec := 0
	for _, f := range read.Files {
		if f.Spec == 1 {
			underNewSpec += f.Records
		}
	}
	if underNewSpec != len(b5) {
		t.Fatalf("data files under the day(ts) spec hold %d rows, want floe's last batch of %d: %+v", underNewSpec, len(b5), read.Files)
	}

	dropped := pyAnswer[struct {
		Exists     bool
		Load       string
		Tables     []string
		Namespaces []string
	}](t, answers, "drop")
	if dropped.Exists || !strings.HasPrefix(dropped.Load, "NoSuchTableError") || len(dropped.Tables) != 0 || len(dropped.Namespaces) != 0 {
		t.Fatalf("after the purge PyIceberg sees: %+v", dropped)
	}
	// The purge deleted every file of the table: PyIceberg's, floe's,
	// data and metadata.
	var left []string
	loc := strings.TrimPrefix(created.Location, "file://")
	err := filepath.WalkDir(loc, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, path)
		}
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(read.Files) < 5 {
		t.Fatalf("the table had %d data files; the scenario did not run", len(read.Files))
	}
	if len(left) > 0 {
		t.Fatalf("after the purge, %d of the table's files are left (of %d data files and its metadata), as %s", len(left), len(read.Files), strings.Join(left[:min(len(left), 5)], ", "))
	}
	if code := stop(); code != 0 {
		t.Fatalf("floe serve exited %d", code)
	}
	if r := e.OK("table", "list"); strings.TrimSpace(r.Stdout) != "" {
		t.Fatalf("tables left behind:\n%s", r.Stdout)
	}
}

// pyRow is a row of the PyIceberg table, as pyiceberg_check.py reads and
// prints it: ts in microseconds since the epoch.
type pyRow struct {
	ID       int64    `json:"id"`
	Name     *string  `json:"name"`
	TS       *int64   `json:"ts"`
	Amount   *float64 `json:"amount"`
	Category *string  `json:"category"`
	Note     *string  `json:"note"`
}

type pySpecField struct {
	Source    int    `json:"source"`
	Transform string `json:"transform"`
	Name      string `json:"name"`
}

// pySince is the least ts of the filtered scan: 2026-01-03, the batches'
// third day.
var pySince = time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC).UnixMicro()

// pyBatch makes the rows of ids from to to: ts 37 minutes apart from
// 2026-01-01 (several days, and nulls), amounts in quarters, four
// categories and nulls; note only when withNote, as before PyIceberg added
// the column.
func pyBatch(from, to int64, withNote bool) []pyRow {
	str := func(s string) *string { return &s }
	var rows []pyRow
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := from; i < to; i++ {
		r := pyRow{ID: i}
		if i%7 != 0 {
			r.Name = str(fmt.Sprintf("name-%d", i))
		}
		if i%11 != 0 {
			ts := start.Add(time.Duration(i)*37*time.Minute + time.Duration(i%5)*time.Microsecond).UnixMicro()
			r.TS = &ts
		}
		if i%13 != 0 {
			a := float64(i) * 0.25
			r.Amount = &a
		}
		if i%17 != 0 {
			r.Category = str([]string{"a", "b", "c", "d"}[i%4])
		}
		if withNote && i%5 != 0 {
			r.Note = str(fmt.Sprintf("note %d", i))
		}
		rows = append(rows, r)
	}
	return rows
}

func writeJSONLines(t *testing.T, path string, rows []pyRow) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writePyRows writes rows as a landing Parquet file: id required, as the
// table has it.
func writePyRows(t *testing.T, path string, rows []pyRow) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "category", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	str := func(i int, s *string) {
		if s == nil {
			b.Field(i).AppendNull()
		} else {
			b.Field(i).(*array.StringBuilder).Append(*s)
		}
	}
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.ID)
		str(1, r.Name)
		if r.TS == nil {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(*r.TS))
		}
		if r.Amount == nil {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Float64Builder).Append(*r.Amount)
		}
		str(4, r.Category)
		str(5, r.Note)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := fixture.WriteParquet(path, rec); err != nil {
		t.Fatal(err)
	}
}

// pyAnswer decodes one step's answer.
func pyAnswer[T any](t *testing.T, answers map[string]json.RawMessage, step string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(answers[step], &v); err != nil {
		t.Fatalf("pyiceberg_check.py's %s answer %s: %v", step, answers[step], err)
	}
	return v
}

// checkPyRows fails t unless got holds the rows of the batches, each as
// many times as they do, and no other.
func checkPyRows(t *testing.T, what string, got []pyRow, batches ...[]pyRow) {
	t.Helper()
	count := map[string]int{}
	want := 0
	for _, r := range slices.Concat(batches...) {
		count[r.key()]++
		want++
	}
	var problems []string
	for _, r := range got {
		if count[r.key()]--; count[r.key()] < 0 {
			problems = append(problems, "unexpected or repeated: "+r.key())
		}
	}
	for k, n := range count {
		if n > 0 {
			problems = append(problems, fmt.Sprintf("missing %d times: %s", n, k))
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		t.Fatalf("%s: %d rows, want %d; %d differences:\n%s", what, len(got), want, len(problems), strings.Join(problems[:min(len(problems), 20)], "\n"))
	}
	t.Logf("%s: %d rows, as went in", what, len(got))
}

// key is the row's values, nulls told apart from every value.
func (r pyRow) key() string {
	v := func(p any) string {
		switch p := p.(type) {
		case *string:
			if p != nil {
				return fmt.Sprintf("%q", *p)
			}
		case *int64:
			if p != nil {
				return fmt.Sprint(*p)
			}
		case *float64:
			if p != nil {
				return fmt.Sprint(*p)
			}
		}
		return "null"
	}
	return fmt.Sprintf("id=%d name=%s ts=%s amount=%s category=%s note=%s", r.ID, v(r.Name), v(r.TS), v(r.Amount), v(r.Category), v(r.Note))
}
