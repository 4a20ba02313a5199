package nicsim.wave;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.commons.compress.compressors.CompressorException;
import org.apache.commons.compress.compressors.CompressorStreamFactory;
import org.apache.commons.compress.compressors.gzip.GzipCompressorOutputStream;
import org.apache.commons.compress.compressors.xz.XZCompressorOutputStream;
import org.tukaani.xz.LZMA2Options;

/**
 * Opens waveform files, compressed or not, through Apache Commons Compress.
 * Writing picks the format from the file name (.vcd, .vcd.gz, .vcd.xz); reading detects it from
 * the file's magic bytes, so a renamed file still opens.
 */
public final class WaveFiles {
    private WaveFiles() {}

    /** The compression a file name asks for. */
    public enum Compression { NONE, GZIP, XZ;
        public static Compression forName(String fileName) {
            if (fileName.endsWith(".gz")) return GZIP;
            if (fileName.endsWith(".xz")) return XZ;
            if (fileName.endsWith(".vcd")) return NONE;
            throw new IllegalArgumentException("waveform file name '" + fileName
                    + "' must end in .vcd, .vcd.gz or .vcd.xz");
        }
    }

    public static OutputStream openOutput(Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) Files.createDirectories(parent);
        OutputStream raw = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16);
        switch (Compression.forName(file.getFileName().toString())) {
            case GZIP: return new GzipCompressorOutputStream(raw);
            // preset 3: waveforms are highly repetitive, higher presets cost time for little gain
            case XZ: return XZCompressorOutputStream.builder().setOutputStream(raw)
                    .setLzma2Options(new LZMA2Options(3)).get();
            default: return raw;
        }
    }

    public static InputStream openInput(Path file) throws IOException {
        InputStream raw = new BufferedInputStream(Files.newInputStream(file), 1 << 16);
        String kind;
        try {
            kind = CompressorStreamFactory.detect(raw);
        } catch (CompressorException notCompressed) {
            return raw;
        }
        try {
            return new CompressorStreamFactory().createCompressorInputStream(kind, raw);
        } catch (CompressorException e) {
            raw.close();
            throw new IOException("cannot decompress " + file + " (" + kind + "): " + e.getMessage(), e);
        }
    }
}
