package files

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// The codecs of compressed text inputs (CSV, JSON lines, Debezium events),
// by the name source.compression takes, with the file extensions that
// name them when it is auto, as Spark and Hadoop tell them apart, and the
// bytes each format's files start with.
var codecs = []struct {
	name  string
	exts  []string
	magic []byte
}{
	{"gzip", []string{".gz", ".gzip"}, []byte{0x1f, 0x8b}},
	{"zstd", []string{".zst", ".zstd"}, []byte{0x28, 0xb5, 0x2f, 0xfd}},
	{"bzip2", []string{".bz2"}, []byte("BZh")},
}

// codecOf is the codec a file is read with: the configured one, or with
// auto (or nothing set) the one its extension names, "" for none.
func codecOf(compression, path string) string {
	switch compression {
	case "", "auto":
		lower := strings.ToLower(path)
		for _, c := range codecs {
			for _, ext := range c.exts {
				if strings.HasSuffix(lower, ext) {
					return c.name
				}
			}
		}
		return ""
	case "none":
		return ""
	}
	return compression
}

// textOpener opens a text input (see openText).
type textOpener func() (*bufio.Reader, io.Closer, error)

// openText opens a text input through its codec, buffered, past a byte
// order mark. A file read as plain text that starts as a compressed file
// does is refused, naming its compression: its bytes would otherwise be
// reported as malformed CSV or JSON.
func openText(f io.ReadCloser, codec string) (*bufio.Reader, io.Closer, error) {
	var (
		r      io.Reader = f
		closer io.Closer = f
	)
	switch codec {
	case "":
		br := bufio.NewReaderSize(f, 1<<20)
		head, _ := br.Peek(4)
		for _, c := range codecs {
			if bytes.HasPrefix(head, c.magic) {
				_ = f.Close()
				return nil, nil, fmt.Errorf("the file starts as a %s-compressed file does, but is read as plain text; "+
					"give it the extension of its compression (%s) or set source.compression: %s (--compression %s)", c.name, c.exts[0], c.name, c.name)
			}
		}
		skipBOM(br)
		return br, f, nil
	case "gzip":
		zr, err := gzip.NewReader(f)
		if err != nil {
			_ = f.Close()
			return nil, nil, fmt.Errorf("not a readable gzip file (%v); it may be damaged, or not compressed: name it without .gz, or set source.compression: none", err)
		}
		r, closer = zr, closers{zr, f}
	case "zstd":
		zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
		if err != nil {
			_ = f.Close()
			return nil, nil, fmt.Errorf("not a readable zstd file: %v", err)
		}
		rc := zr.IOReadCloser()
		r, closer = rc, closers{rc, f}
	case "bzip2":
		r = bzip2.NewReader(f)
	default:
		_ = f.Close()
		return nil, nil, fmt.Errorf("compression %q is not known", codec)
	}
	br := bufio.NewReaderSize(&codecErrors{r: r, codec: codec}, 1<<20)
	skipBOM(br)
	return br, closer, nil
}

// codecErrors names the codec in a failure to decompress, which the
// readers above it would report as malformed input.
type codecErrors struct {
	r     io.Reader
	codec string
}

func (c *codecErrors) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("%s decompression failed (the file may be truncated or not %s-compressed): %w", c.codec, c.codec, err)
	}
	return n, err
}

// closers closes a decompressor and the file under it.
type closers [2]io.Closer

func (c closers) Close() error { return errors.Join(c[0].Close(), c[1].Close()) }

// codec is the codec the part's file is read with.
func (p *filePart) codec() string { return codecOf(p.cfg.Compression, p.entry.Path) }
