package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"

	"github.com/floe-io/floe/internal/fixture"
)

// zstdFrame is a zstd frame and the bytes it must decode to; name tells
// where it came from.
type zstdFrame struct {
	name           string
	frame, content []byte
}

// The decoders users run: klauspost's (Go's: floe's, parquet-go's,
// arrow-go's), libzstd through the zstd command, and the JVM's through
// ZstdDecoders.java, as Trino (aircompressor) and Spark (zstd-jni, which
// bundles libzstd 1.5.7) read Parquet pages, one-shot and as streams.
const decoderKlauspost, decoderLibzstd = "klauspost", "libzstd"

// checkFramesDecode fails t unless every frame decodes to exactly its
// content in every decoder, and returns how many frames each decoder
// decoded. A decoder that is not installed (the zstd command, the JVM's)
// is left out with a note, or fails the test under FLOE_REQUIRE_ENGINES=1.
func checkFramesDecode(t *testing.T, frames []zstdFrame) map[string]int {
	t.Helper()
	if len(frames) == 0 {
		t.Fatal("no zstd frames to decode")
	}
	dir := t.TempDir()
	var list strings.Builder
	paths := make([]string, len(frames))
	want := map[string]zstdFrame{}
	for i, f := range frames {
		paths[i] = filepath.Join(dir, fmt.Sprintf("%05d.zst", i))
		content := filepath.Join(dir, fmt.Sprintf("%05d.want", i))
		if err := os.WriteFile(paths[i], f.frame, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(content, f.content, 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&list, "%s\t%s\n", paths[i], content)
		want[paths[i]] = f
	}
	// Every decoder's answer by frame path: "" when it decoded the frame to
	// its content, else what went wrong.
	answers := map[string]map[string]string{}
	answer := func(decoder, path, problem string) {
		if answers[decoder] == nil {
			answers[decoder] = map[string]string{}
		}
		answers[decoder][path] = problem
	}
	compare := func(path string, got []byte, err error) string {
		switch content := want[path].content; {
		case err != nil:
			return "refused\t" + err.Error()
		case !bytes.Equal(got, content):
			at := 0
			for at < min(len(got), len(content)) && got[at] == content[at] {
				at++
			}
			return fmt.Sprintf("differs\t%d bytes, not the %d it holds, from byte %d", len(got), len(content), at)
		}
		return "ok"
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	for _, p := range paths {
		got, err := dec.DecodeAll(want[p].frame, nil)
		answer(decoderKlauspost, p, compare(p, got, err))
	}
	if cli, err := exec.LookPath("zstd"); err != nil {
		missingDecoder(t, "the zstd command (libzstd): "+err.Error())
	} else {
		// zstd 1.5.4 crashes on an output directory that does not exist.
		out := filepath.Join(dir, "libzstd")
		if err := os.Mkdir(out, 0o700); err != nil {
			t.Fatal(err)
		}
		// One process for every frame; a frame it refuses is named on
		// stderr and leaves no output.
		cmd := exec.Command(cli, append([]string{"-d", "-q", "-f", "--output-dir-flat", out}, paths...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		runErr := cmd.Run()
		for _, p := range paths {
			got, err := os.ReadFile(filepath.Join(out, strings.TrimSuffix(filepath.Base(p), ".zst")))
			if err != nil {
				err = fmt.Errorf("%v: %s", runErr, zstdErrorOf(stderr.String(), p))
			}
			answer(decoderLibzstd, p, compare(p, got, err))
		}
	}
	if jvm, reason := jvmDecoders.start(); reason != "" {
		missingDecoder(t, reason)
	} else {
		listPath := filepath.Join(dir, "frames.list")
		if err := os.WriteFile(listPath, []byte(list.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		lines, err := jvm.decode(listPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range lines {
			path, rest, _ := strings.Cut(line, "\t")
			decoder, verdict, ok := strings.Cut(rest, "\t")
			if !ok || want[path].frame == nil {
				t.Fatalf("ZstdDecoders.java printed %q", line)
			}
			answer(decoder, path, verdict)
		}
	}
	// The verdict, frame by frame, for each decoder that answered.
	decoded := map[string]int{}
	var problems []string
	for decoder, byPath := range answers {
		for _, p := range paths {
			switch verdict, ok := byPath[p]; {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s: %s gave no answer", want[p].name, decoder))
			case verdict != "ok":
				problems = append(problems, fmt.Sprintf("%s: %s %s", want[p].name, decoder, strings.ReplaceAll(verdict, "\t", ": ")))
			default:
				decoded[decoder]++
			}
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		if len(problems) > 30 {
			problems = append(problems[:30], fmt.Sprintf("and %d more", len(problems)-30))
		}
		t.Errorf("%d answers of %d decoders on %d zstd frames are not the frame's bytes:\n%s",
			len(problems), len(answers), len(frames), strings.Join(problems, "\n"))
	}
	return decoded
}

// zstdErrorOf is the zstd command's complaint about the frame at path.
func zstdErrorOf(stderr, path string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, filepath.Base(path)) {
			return line
		}
	}
	return "no output"
}

// missingDecoder notes a decoder the matrix cannot run here.
func missingDecoder(t *testing.T, reason string) {
	t.Helper()
	if os.Getenv(fixture.RequireEnginesEnv) == "1" {
		t.Fatalf("%s; %s=1 requires every zstd decoder", reason, fixture.RequireEnginesEnv)
	}
	t.Logf("zstd frames not checked by %s", reason)
}

// jvmDecoders runs ZstdDecoders.java, once per test run: a JVM costs
// seconds to start. Tests ask it in turn.
var jvmDecoders jvmZstd

type jvmZstd struct {
	once   sync.Once
	reason string // why the JVM's decoders cannot run, if they cannot
	mu     sync.Mutex
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr fixture.SyncBuffer
}

// start starts the JVM on first use, and returns it, or why it cannot run.
func (j *jvmZstd) start() (*jvmZstd, string) {
	j.once.Do(func() {
		eng, reason := fixture.FindEngines()
		if reason != "" {
			j.reason = "the JVM's decoders: " + reason
			return
		}
		// The client compiler alone and the serial collector: the JVM
		// starts in half the CPU, and decodes no slower for a test's frames.
		j.cmd = exec.Command("java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
			"-cp", eng.Classpath("zstd"), "ZstdDecoders.java")
		j.cmd.Stderr = &j.stderr
		var err error
		if j.in, err = j.cmd.StdinPipe(); err != nil {
			j.reason = err.Error()
			return
		}
		stdout, err := j.cmd.StdoutPipe()
		if err != nil {
			j.reason = err.Error()
			return
		}
		j.out = bufio.NewReaderSize(stdout, 1<<16)
		if err := j.cmd.Start(); err != nil {
			j.reason = "the JVM's decoders: java: " + err.Error()
		}
	})
	return j, j.reason
}

// decode has the JVM decode the frames of a list file and returns its
// answers, a line a frame and decoder.
func (j *jvmZstd) decode(list string) ([]string, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := fmt.Fprintln(j.in, list); err != nil {
		return nil, fmt.Errorf("ZstdDecoders.java: %v\n%s", err, j.stderr.String())
	}
	var lines []string
	for {
		line, err := j.out.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("ZstdDecoders.java ended: %v\n%s", err, j.stderr.String())
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "end" {
			return lines, nil
		}
		lines = append(lines, line)
	}
}

// stop ends the JVM, if it started: its stdin closes, and it exits.
func (j *jvmZstd) stop() {
	if j.cmd == nil || j.cmd.Process == nil {
		return
	}
	_ = j.in.Close()
	_ = j.cmd.Wait()
}

// checkPagesDecode reads the zstd pages of the Parquet files of the
// table's current snapshot, data and delete files, and has them decoded by
// every decoder (checkFramesDecode) when the test ends: in one batch, as a
// test checks its tables many times.
func (e *env) checkPagesDecode(ti tableInfo) {
	e.T.Helper()
	e.pages.mu.Lock()
	defer e.pages.mu.Unlock()
	ctx := context.Background()
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"t"}, ti.MetadataLocation, icebergio.LoadFSFunc(nil, ti.MetadataLocation), nil)
	if err != nil {
		e.T.Fatal(err)
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		e.T.Fatal(err)
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		e.T.Fatal(err)
	}
	for _, m := range manifests {
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			e.T.Fatal(err)
		}
		for _, entry := range entries {
			f := entry.DataFile()
			if f.FileFormat() != iceberg.ParquetFile || e.pages.files[f.FilePath()] {
				continue
			}
			// A frame decodes alike wherever it is: the many small files
			// of partitioned tables repeat most of theirs.
			e.pages.files[f.FilePath()] = true
			for _, p := range zstdPages(e.T, strings.TrimPrefix(f.FilePath(), "file://")) {
				if provenFrames.add(p.frame) {
					e.pages.frames = append(e.pages.frames, p)
				}
			}
		}
	}
}

// pageCheck is what checkPagesDecode read of a test's tables: the files,
// and the pages of theirs that no test read before.
type pageCheck struct {
	mu     sync.Mutex
	files  map[string]bool
	frames []zstdFrame
}

// decodePages decodes the pages checkPagesDecode read, at the test's end
// (newEnv).
func (e *env) decodePages() {
	frames := e.pages.frames
	if len(frames) == 0 || e.T.Failed() {
		return
	}
	decoded := checkFramesDecode(e.T, frames)
	if !e.T.Failed() {
		e.T.Logf("%d zstd pages of the test's tables, none checked before, decode alike in %s", len(frames), decoderNames(decoded))
	}
}

// provenFrames are the digests of the frames of tables' pages that the
// test run checked (or is checking) in every decoder.
var provenFrames frameSet

type frameSet struct {
	mu   sync.Mutex
	seen map[[sha256.Size]byte]bool
}

// add adds frame to the set, and reports whether it was new.
func (s *frameSet) add(frame []byte) bool {
	sum := sha256.Sum256(frame)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[sum] {
		return false
	}
	if s.seen == nil {
		s.seen = map[[sha256.Size]byte]bool{}
	}
	s.seen[sum] = true
	return true
}

// decoderNames lists the decoders that decoded frames.
func decoderNames(decoded map[string]int) string {
	var names []string
	for name := range decoded {
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// zstdPages returns the zstd-compressed pages of a Parquet file, each with
// the bytes klauspost's decoder gives, which must be as many as its header
// says.
func zstdPages(t *testing.T, path string) []zstdFrame {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	var frames []zstdFrame
	for g := range pf.NumRowGroups() {
		for col := range pf.MetaData().Schema.NumColumns() {
			cc, err := pf.MetaData().RowGroup(g).ColumnChunk(col)
			if err != nil {
				t.Fatal(err)
			}
			if cc.Compression() != compress.Codecs.Zstd {
				continue
			}
			n := 0
			columnPages(t, pf, b, g, col, func(h *format.PageHeader, body []byte) {
				size := int(h.UncompressedPageSize)
				if h.Type == format.DataPageV2 {
					v2 := h.DataPageHeaderV2.V
					if v2.IsCompressed.Valid && !v2.IsCompressed.V {
						return
					}
					size -= int(v2.DefinitionLevelsByteLength + v2.RepetitionLevelsByteLength)
				}
				name := fmt.Sprintf("%s row group %d column %s page %d", filepath.Base(path), g, cc.PathInSchema(), n)
				n++
				content, err := dec.DecodeAll(body, nil)
				if err != nil || len(content) != size {
					t.Fatalf("%s does not decode to the %d bytes its header says: %d bytes, %v", name, size, len(content), err)
				}
				frames = append(frames, zstdFrame{name: name, frame: body, content: content})
			})
		}
	}
	return frames
}
