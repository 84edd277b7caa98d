package files_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/floe-io/floe/config"
)

// compressed is the landing file name and bytes of a plain file under a
// codec: gzip and zstd written here, bzip2 (which Go only decodes) from
// the twin testdata/compressed holds, made by the bzip2 tool.
func compressed(t *testing.T, plain, codec string) (string, []byte) {
	t.Helper()
	src := filepath.Join("testdata", "compressed", plain)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	switch codec {
	case "gzip":
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(b); err != nil || zw.Close() != nil {
			t.Fatal(err)
		}
		return plain + ".gz", buf.Bytes()
	case "zstd":
		zw, err := zstd.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := zw.Write(b); err != nil || zw.Close() != nil {
			t.Fatal(err)
		}
		return plain + ".zst", buf.Bytes()
	case "bzip2":
		bz, err := os.ReadFile(src + ".bz2")
		if err != nil {
			t.Fatal(err)
		}
		return plain + ".bz2", bz
	}
	return plain, b
}

// A compressed CSV or JSON lines file lands the same rows, of the same
// types, as its plain twin, its codec told by its extension as Spark
// tells it.
func TestCompressedTextLandsAsItsPlainTwin(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"csv", "json"} {
		plainName := "events." + format
		plain := newPipelineDir(t)
		_, b := compressed(t, plainName, "")
		plain.land(plainName, string(b))
		plain.mustStream(config.Source{Format: format}, "db.t")
		want, wantFields := plain.rows("db.t"), plain.fields("db.t")
		if len(want) != 300 {
			t.Fatalf("%s: the plain file landed %d rows, want 300", format, len(want))
		}
		for _, codec := range []string{"gzip", "zstd", "bzip2"} {
			t.Run(format+"/"+codec, func(t *testing.T) {
				t.Parallel()
				d := newPipelineDir(t)
				name, data := compressed(t, plainName, codec)
				d.land(name, string(data))
				d.mustStream(config.Source{Format: format}, "db.t")
				d.sameTable("db.t", want, wantFields)
			})
		}
	}
}

// source.compression reads files whose names do not say; none reads every
// file as plain text.
func TestCompressionSetExplicitly(t *testing.T) {
	t.Parallel()
	_, gz := compressed(t, "events.json", "gzip")
	p, _ := onePart(t, config.Source{Format: "json", Compression: "gzip"}, "events.json", string(gz))
	tb, err := readPart(t, p)
	if err != nil || len(tb.cols["id"]) != 300 {
		t.Fatalf("a gzip file named events.json read with compression gzip: %d rows, %v", len(tb.cols["id"]), err)
	}
	_, plain := compressed(t, "events.csv", "")
	p, _ = onePart(t, config.Source{Format: "csv", Compression: "none"}, "events.csv.gz", string(plain))
	if tb, err = readPart(t, p); err != nil || len(tb.cols["id"]) != 300 {
		t.Fatalf("a plain file named events.csv.gz read with compression none: %d rows, %v", len(tb.cols["id"]), err)
	}
}

// A compressed file read as plain text is a bad file whose error names
// its compression and the fix, not a malformed line; a damaged compressed
// file names the codec that failed.
func TestCompressedFileReadAsPlainTextIsRefused(t *testing.T) {
	t.Parallel()
	for _, codec := range []string{"gzip", "zstd", "bzip2"} {
		for _, format := range []string{"csv", "json"} {
			_, data := compressed(t, "events."+format, codec)
			p, path := onePart(t, config.Source{Format: format}, "events."+format, string(data))
			_, err := readPart(t, p)
			bf := badFile(t, err, path)
			if msg := bf.Error(); !strings.Contains(msg, codec+"-compressed") || !strings.Contains(msg, "source.compression: "+codec) {
				t.Fatalf("%s read as plain %s: %v", codec, format, err)
			}
		}
	}
	_, gz := compressed(t, "events.json", "gzip")
	p, path := onePart(t, config.Source{Format: "json"}, "events.json.gz", string(gz[:len(gz)/2]))
	_, err := readPart(t, p)
	if bf := badFile(t, err, path); !strings.Contains(bf.Error(), "gzip decompression failed") {
		t.Fatalf("a truncated gzip file: %v", err)
	}
}
