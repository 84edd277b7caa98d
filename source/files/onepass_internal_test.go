package files

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/fixture"
)

func readPart(t *testing.T, p *filePart, schemaFirst bool) (string, string) {
	t.Helper()
	ctx := t.Context()
	errText := func(err error) string { return strings.ReplaceAll(err.Error(), p.entry.Path, "FILE") }
	if schemaFirst {
		// Inferred before it is opened, the file is read twice.
		if _, err := p.Schema(ctx); err != nil {
			return "", errText(err)
		}
	}
	rdr, err := p.Open(ctx)
	if err != nil {
		return "", errText(err)
	}
	defer rdr.Release()
	var b strings.Builder
	b.WriteString(rdr.Schema().String() + "\n")
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for i := range int(rec.NumRows()) {
			for c := range int(rec.NumCols()) {
				b.WriteString(rec.Column(c).ValueStr(i) + "|")
			}
			b.WriteString("\n")
		}
	}
	if rdr.Err() != nil {
		return b.String(), errText(rdr.Err())
	}
	return b.String(), ""
}

// TestOnePassAsTwoPasses reads random JSON-lines files whose columns are
// inferred in one pass (opened first) and in two (their schema asked
// first): the same columns, rows and errors. Keys come late, numbers widen
// from integers to doubles, objects nest, values are null or missing.
func TestOnePassAsTwoPasses(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	value := func(key string, i int) string {
		switch key {
		case "n":
			if rnd.IntN(8) == 0 {
				return fmt.Sprintf("%d.5", i)
			}
			return fmt.Sprint(i)
		case "s":
			return fmt.Sprintf("%q", strings.Repeat("é", rnd.IntN(3))+fmt.Sprint(i))
		case "o":
			return fmt.Sprintf(`{"a":%d,"b":[%d,null]}`, i, i)
		case "late":
			return "true"
		}
		return "null"
	}
	for round := range 60 {
		var in strings.Builder
		lines := 1 + rnd.IntN(300)
		for i := range lines {
			var kv []string
			for _, k := range []string{"n", "s", "o", "late", "z"} {
				if k == "late" && i < lines/2 || rnd.IntN(6) == 0 {
					continue
				}
				kv = append(kv, fmt.Sprintf("%q:%s", k, value(k, i)))
			}
			if rnd.IntN(2000) == 0 {
				kv = append(kv, `"n":"conflict"`)
			}
			in.WriteString("{" + strings.Join(kv, ",") + "}\n")
			if rnd.IntN(50) == 0 {
				in.WriteString("\n")
			}
		}
		write := func(path string) error { return fixture.Land(path, []byte(in.String())) }
		one, oneErr := readPart(t, planOne(t, config.Source{Format: "json"}, "f.jsonl", write), false)
		two, twoErr := readPart(t, planOne(t, config.Source{Format: "json"}, "f.jsonl", write), true)
		if oneErr != twoErr || one != two {
			t.Fatalf("round %d: one pass:\n%s%s\ntwo passes:\n%s%s\ninput:\n%s", round, one, oneErr, two, twoErr, in.String())
		}
	}
}

// TestOnePassBudget holds a one-pass read's file in the budget until its
// reader is released, and reads a file twice, rows unchanged, when the
// budget is spent.
func TestOnePassBudget(t *testing.T) {
	write := func(path string) error { return fixture.Land(path, fixture.IDJSON(0, 100)) }
	want, _ := readPart(t, planOne(t, config.Source{Format: "json"}, "f.jsonl", write), true)

	p := planOne(t, config.Source{Format: "json"}, "f.jsonl", write)
	rdr, err := p.Open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := onePassHeld.Load(); got != p.entry.Size {
		t.Fatalf("a one-pass read holds %d bytes of the budget, want the file's %d", got, p.entry.Size)
	}
	rdr.Release()
	if got := onePassHeld.Load(); got != 0 {
		t.Fatalf("released, the budget holds %d bytes, want 0", got)
	}

	onePassHeld.Store(onePassBudget)
	defer onePassHeld.Store(0)
	got, gotErr := readPart(t, planOne(t, config.Source{Format: "json"}, "f.jsonl", write), false)
	if got != want || gotErr != "" {
		t.Fatalf("with the budget spent: %s%s, want %s", got, gotErr, want)
	}
	if held := onePassHeld.Load(); held != onePassBudget {
		t.Fatalf("a file read twice changed the budget to %d", held)
	}
}
