// The JVM's zstd decoders as Parquet readers run them, over frames the Go
// tests wrote: aircompressor's (Trino's), one-shot into a buffer of the
// page's uncompressed size and as a stream, and zstd-jni's (libzstd, as
// Spark's Parquet reader calls it), one-shot and as a stream.
//
// Run from source, once per test run: java -cp <aircompressor and zstd-jni
// jars> ZstdDecoders.java. Each line on stdin names a list of frames, one
// a line: the frame's path, a tab, the path of the bytes it must decode
// to. For every frame and decoder it prints the frame's path, the decoder
// and "ok", or "refused" or "differs" and why, tab-separated; then "end".
import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import io.airlift.compress.zstd.ZstdDecompressor;
import io.airlift.compress.zstd.ZstdInputStream;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

public class ZstdDecoders {
    interface Decoder {
        byte[] decode(byte[] frame, int length) throws Exception;
    }

    public static void main(String[] args) throws Exception {
        Map<String, Decoder> decoders = new LinkedHashMap<>();
        decoders.put("aircompressor", (frame, length) -> {
            byte[] out = new byte[length];
            int n = new ZstdDecompressor().decompress(frame, 0, frame.length, out, 0, out.length);
            if (n != length) {
                throw new IllegalStateException("decoded " + n + " bytes into a buffer of " + length);
            }
            return out;
        });
        decoders.put("aircompressor-stream", (frame, length) -> {
            try (ZstdInputStream in = new ZstdInputStream(new ByteArrayInputStream(frame))) {
                return in.readAllBytes();
            }
        });
        decoders.put("zstd-jni", (frame, length) -> {
            byte[] out = new byte[length];
            long n = Zstd.decompressByteArray(out, 0, out.length, frame, 0, frame.length);
            if (Zstd.isError(n)) {
                throw new IllegalStateException(Zstd.getErrorName(n));
            }
            if (n != length) {
                throw new IllegalStateException("decoded " + n + " bytes into a buffer of " + length);
            }
            return out;
        });
        decoders.put("zstd-jni-stream", (frame, length) -> {
            try (ZstdInputStreamNoFinalizer in = new ZstdInputStreamNoFinalizer(new ByteArrayInputStream(frame))) {
                return in.readAllBytes();
            }
        });
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        BufferedReader requests = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String list; (list = requests.readLine()) != null; ) {
            for (String line : Files.readAllLines(Path.of(list), StandardCharsets.UTF_8)) {
                if (line.isEmpty()) {
                    continue;
                }
                String[] f = line.split("\t");
                byte[] frame = Files.readAllBytes(Path.of(f[0]));
                byte[] want = Files.readAllBytes(Path.of(f[1]));
                for (Map.Entry<String, Decoder> d : decoders.entrySet()) {
                    String answer;
                    try {
                        answer = verdict(d.getValue().decode(frame, want.length), want);
                    } catch (Throwable e) {
                        answer = "refused\t" + String.valueOf(e).replaceAll("\\s+", " ");
                    }
                    out.println(f[0] + "\t" + d.getKey() + "\t" + answer);
                }
            }
            out.println("end");
            out.flush();
        }
    }

    static String verdict(byte[] got, byte[] want) {
        int at = Arrays.mismatch(got, want);
        if (at < 0) {
            return "ok";
        }
        return "differs\t" + got.length + " bytes, not the " + want.length + " it holds, from byte " + at;
    }
}
